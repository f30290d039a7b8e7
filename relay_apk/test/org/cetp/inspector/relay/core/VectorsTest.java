package org.cetp.inspector.relay.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.Test;

/**
 * The shared vectors of tests/vectors/ (README there): the Java codec must decode and
 * re-encode every valid vector byte for byte and reject every invalid one.
 * The folder comes from the system property {@code vectors.dir}.
 */
public class VectorsTest {
    private static File dir() {
        String d = System.getProperty("vectors.dir");
        assertTrue("set -Dvectors.dir to tests/vectors", d != null && new File(d).isDirectory());
        return new File(d);
    }

    private static List<String> names(String prefix) {
        List<String> out = new ArrayList<String>();
        String[] files = dir().list();
        Arrays.sort(files);
        for (String f : files) {
            if (f.startsWith(prefix) && f.endsWith(".bin")) {
                out.add(f.substring(0, f.length() - 4));
            }
        }
        assertTrue("no " + prefix + "* vectors found", !out.isEmpty());
        return out;
    }

    private static byte[] bin(String name) throws IOException {
        return Files.readAllBytes(new File(dir(), name + ".bin").toPath());
    }

    private static Object json(String name) throws IOException {
        return MiniJson.parse(new String(Files.readAllBytes(new File(dir(), name + ".json").toPath()),
                "UTF-8"));
    }

    /** Files in the folder that are not vectors: the generator and its notes. */
    private static final List<String> NOT_VECTORS = Arrays.asList("README.md", "generate.py",
            "__init__.py");
    private static final String[] KINDS = {"bundle-", "frame-", "invalid-value-", "invalid-frame-"};

    /**
     * Every file of tests/vectors/ is loaded here: each is one half of a .bin/.json pair of a
     * kind the other tests check, and every .json parses. A new kind of vector therefore
     * fails this test until the Java side checks it too.
     */
    @Test
    public void everyFileInTheFolderIsAVectorTheseTestsCheck() throws Exception {
        String[] files = dir().list();
        Arrays.sort(files);
        int pairs = 0;
        for (String f : files) {
            File file = new File(dir(), f);
            if (file.isDirectory() || NOT_VECTORS.contains(f)) {
                continue;
            }
            boolean bin = f.endsWith(".bin");
            assertTrue(f + ": a vector is NAME.bin + NAME.json", bin || f.endsWith(".json"));
            String name = f.substring(0, f.lastIndexOf('.'));
            assertTrue(f + ": no partner file", new File(dir(), name + (bin ? ".json" : ".bin"))
                    .isFile());
            boolean known = false;
            for (String k : KINDS) {
                known |= name.startsWith(k);
            }
            assertTrue(f + ": unknown kind of vector (teach VectorsTest about it)", known);
            if (bin) {
                assertTrue(f, bin(name).length > 0 || name.startsWith("invalid-"));
                pairs++;
            } else {
                assertTrue(f + " does not hold a JSON object", json(name) instanceof Map);
            }
        }
        int checked = 0;
        for (String k : KINDS) {
            checked += names(k).size();
        }
        assertEquals("vectors found vs. vectors the tests check", pairs, checked);
    }

    @Test
    public void valueVectorsDecodeAndReencodeByteForByte() throws Exception {
        for (String n : names("bundle-")) {
            byte[] wire = bin(n);
            Object expected = MiniJson.typed(json(n));
            Object decoded = ValueCodec.decode(wire);
            assertTrue(n + ": decoded " + Values.describe(decoded), Values.equal(expected, decoded));
            assertArrayEquals(n + ": encoding", wire, ValueCodec.encode(expected));
        }
    }

    @SuppressWarnings("unchecked")
    @Test
    public void frameVectorsParseAndReencodeByteForByte() throws Exception {
        for (String n : names("frame-")) {
            byte[] wire = bin(n);
            Map<String, Object> j = (Map<String, Object>) json(n);
            Frame f = FrameCodec.read(new ByteArrayInputStream(wire));
            assertEquals(n, ((Long) j.get("type_code")).intValue(), f.type);
            assertEquals(n, ((Long) j.get("request_id")).longValue(), f.requestId);
            byte[] payload;
            if (j.containsKey("raw_base64")) {
                payload = Base64.getDecoder().decode((String) j.get("raw_base64"));
                assertArrayEquals(n, payload, f.payload);
            } else {
                Object expected = MiniJson.typed(j.get("value"));
                assertTrue(n, Values.equal(expected, ValueCodec.decode(f.payload)));
                payload = ValueCodec.encode(expected);
            }
            assertArrayEquals(n + ": frame bytes", wire,
                    FrameCodec.encode(new Frame(f.type, f.requestId, payload)));
        }
    }

    @Test
    public void invalidValuesAreRejected() throws Exception {
        for (String n : names("invalid-value-")) {
            try {
                Object v = ValueCodec.decode(bin(n));
                fail(n + ": accepted " + Values.describe(v));
            } catch (ValueCodec.CodecException expected) {
                // rejected, as it must be
            }
        }
    }

    @Test
    public void invalidFramesAreRejectedFromTheHeaderAlone() throws Exception {
        for (String n : names("invalid-frame-")) {
            try {
                Frame f = FrameCodec.read(new ByteArrayInputStream(bin(n)));
                fail(n + ": accepted " + f);
            } catch (FrameCodec.BadFrameException expected) {
                assertEquals(n, "BAD_FRAME", expected.code);
            } catch (EOFException truncated) {
                assertTrue(n + ": only truncated frames may end in EOF", n.contains("truncated"));
            }
        }
    }
}
