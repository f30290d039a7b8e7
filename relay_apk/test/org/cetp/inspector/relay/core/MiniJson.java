package org.cetp.inspector.relay.core;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Just enough JSON for the shared test vectors (the JDK has no JSON parser). Test-only. */
public final class MiniJson {
    private final String s;
    private int i;

    private MiniJson(String s) {
        this.s = s;
    }

    public static Object parse(String text) {
        MiniJson p = new MiniJson(text);
        Object v = p.value();
        p.ws();
        if (p.i != p.s.length()) {
            throw new IllegalArgumentException("trailing JSON at " + p.i);
        }
        return v;
    }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private Object value() {
        ws();
        char c = s.charAt(i);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<String, Object>();
            i++;
            ws();
            if (s.charAt(i) == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                m.put(k, value());
                ws();
                if (s.charAt(i) == ',') {
                    i++;
                    continue;
                }
                expect('}');
                return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<Object>();
            i++;
            ws();
            if (s.charAt(i) == ']') {
                i++;
                return l;
            }
            while (true) {
                l.add(value());
                ws();
                if (s.charAt(i) == ',') {
                    i++;
                    continue;
                }
                expect(']');
                return l;
            }
        }
        if (c == '"') {
            return string();
        }
        if (s.startsWith("true", i)) {
            i += 4;
            return Boolean.TRUE;
        }
        if (s.startsWith("false", i)) {
            i += 5;
            return Boolean.FALSE;
        }
        if (s.startsWith("null", i)) {
            i += 4;
            return null;
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        String num = s.substring(start, i);
        if (num.contains(".") || num.contains("e") || num.contains("E")) {
            return Double.valueOf(num);
        }
        return Long.valueOf(num);
    }

    private void expect(char c) {
        if (s.charAt(i) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + i);
        }
        i++;
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = s.charAt(i++);
            if (c == '"') {
                return sb.toString();
            }
            if (c == '\\') {
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': sb.append('\n'); break;
                    case 't': sb.append('\t'); break;
                    case 'r': sb.append('\r'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'u':
                        sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default: sb.append(e);
                }
            } else {
                sb.append(c);
            }
        }
    }

    /** The loss-free typed JSON form ({"t", "v"}) → a relay value. */
    @SuppressWarnings("unchecked")
    static Object typed(Object json) {
        Map<String, Object> m = (Map<String, Object>) json;
        String t = (String) m.get("t");
        Object v = m.get("v");
        if ("null".equals(t)) {
            return null;
        } else if ("String".equals(t)) {
            return v;
        } else if ("int".equals(t)) {
            return Integer.valueOf(((Long) v).intValue());
        } else if ("long".equals(t)) {
            return v;
        } else if ("boolean".equals(t)) {
            return v;
        } else if ("double".equals(t)) {
            return v instanceof Long ? Double.valueOf(((Long) v).doubleValue()) : v;
        } else if ("int[]".equals(t)) {
            List<Object> l = (List<Object>) v;
            int[] a = new int[l.size()];
            for (int k = 0; k < a.length; k++) {
                a[k] = ((Long) l.get(k)).intValue();
            }
            return a;
        } else if ("String[]".equals(t)) {
            return ((List<Object>) v).toArray(new String[0]);
        } else if ("Bundle".equals(t)) {
            TypedBundle b = new TypedBundle();
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                b.put(e.getKey(), typed(e.getValue()));
            }
            return b;
        } else if ("Bundle[]".equals(t)) {
            List<Object> l = (List<Object>) v;
            TypedBundle[] a = new TypedBundle[l.size()];
            for (int k = 0; k < a.length; k++) {
                a[k] = l.get(k) == null ? null : (TypedBundle) typed(l.get(k));
            }
            return a;
        } else if ("byte[]".equals(t)) {
            return Base64.getDecoder().decode((String) v);
        } else if ("PendingIntent".equals(t)) {
            Map<String, Object> p = (Map<String, Object>) v;
            return new Handles.PendingIntentRef((String) p.get("id"),
                    (String) p.get("creator_package"), ((Long) p.get("flags")).intValue());
        } else if ("ParcelFileDescriptor".equals(t)) {
            Map<String, Object> p = (Map<String, Object>) v;
            return new Handles.FileRef((String) p.get("id"), (Long) p.get("size"));
        } else if ("unsupported".equals(t)) {
            return new Handles.Unsupported((String) v);
        }
        throw new IllegalArgumentException("unknown typed JSON type " + t);
    }
}
