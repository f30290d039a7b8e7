#!/usr/bin/env bash
# Build the relay APK without Gradle, from Debian packages (see docs/relay-apk.md):
#   aapt package → javac (Java 8, android-23.jar) → dx → aapt add → zipalign → apksigner.
# Usage: relay_apk/build.sh [--install-into-resources] [--out DIR]
#   --install-into-resources  copy the APK to resources/relay/ and write relay.json
# Output: relay_apk/build/cetp-relay.apk (or DIR/cetp-relay.apk).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(dirname "$HERE")"
OUT="$HERE/build"
INSTALL=0
while [ $# -gt 0 ]; do
    case "$1" in
        --install-into-resources) INSTALL=1 ;;
        --out) OUT="$2"; shift ;;
        *) echo "usage: $0 [--install-into-resources] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done

TC="$("$HERE/toolchain.sh")"
ANDROID_JAR="$TC/root/usr/share/java/com.android.android-23.jar"
DX_JAR="$TC/root/usr/share/java/com.android.dx.jar"
FRAMEWORK_RES=/usr/share/android-framework-res/framework-res.apk
# The committed key is public on purpose (docs/relay-apk.md, "Signing key"); forks that ship
# their own relay set RELAY_KEYSTORE / RELAY_KEYSTORE_PASS / RELAY_KEY_ALIAS.
KEYSTORE="${RELAY_KEYSTORE:-$HERE/keystore/relay-debug.p12}"
KS_PASS="${RELAY_KEYSTORE_PASS:-cetp-relay}"
KEY_ALIAS="${RELAY_KEY_ALIAS:-relay}"
APK_NAME=cetp-relay.apk
# Fixed timestamps for everything that lands in the zip, for reproducible output.
export SOURCE_DATE_EPOCH=315532800
export TZ=UTC

rm -rf "$OUT"
mkdir -p "$OUT/gen" "$OUT/classes" "$OUT/dex" "$OUT/stage"

# Stage the inputs with fixed mtimes: aapt stores file times in the zip entries.
cp "$HERE/AndroidManifest.xml" "$OUT/stage/"
cp -r "$HERE/res" "$OUT/stage/res"
find "$OUT/stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

aapt package -f -M "$OUT/stage/AndroidManifest.xml" -S "$OUT/stage/res" \
    -I "$FRAMEWORK_RES" -J "$OUT/gen" -F "$OUT/resources.apk"

mapfile -t SOURCES < <(find "$HERE/src/core" "$HERE/src/app" "$OUT/gen" -name '*.java' | LC_ALL=C sort)
javac -nowarn -Xlint:-options -encoding UTF-8 -source 8 -target 8 -bootclasspath "$ANDROID_JAR" \
    -d "$OUT/classes" "${SOURCES[@]}"

java -jar "$DX_JAR" --dex --min-sdk-version=26 --output="$OUT/dex/classes.dex" "$OUT/classes"
touch -d "@$SOURCE_DATE_EPOCH" "$OUT/dex/classes.dex"

cp "$OUT/resources.apk" "$OUT/unsigned.apk"
(cd "$OUT/dex" && aapt add "$OUT/unsigned.apk" classes.dex >/dev/null)
zipalign -f -p 4 "$OUT/unsigned.apk" "$OUT/aligned.apk"
apksigner sign --ks "$KEYSTORE" --ks-pass "pass:$KS_PASS" --ks-key-alias "$KEY_ALIAS" \
    --key-pass "pass:$KS_PASS" --v1-signing-enabled false --v2-signing-enabled true \
    --v3-signing-enabled true --v4-signing-enabled false \
    --out "$OUT/$APK_NAME" "$OUT/aligned.apk"
apksigner verify "$OUT/$APK_NAME"
rm -f "$OUT/unsigned.apk" "$OUT/aligned.apk" "$OUT/resources.apk"

if [ "$INSTALL" = 1 ]; then
    DEST="$REPO/resources/relay"
    mkdir -p "$DEST"
    cp "$OUT/$APK_NAME" "$DEST/$APK_NAME"
    python3 - "$DEST" "$APK_NAME" "$HERE" <<'PY'
import hashlib, json, re, subprocess, sys
from pathlib import Path
dest, apk_name, here = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
sys.path.insert(0, str(here))
from sources_digest import sources_digest
apk = dest / apk_name
badging = subprocess.run(["aapt", "dump", "badging", str(apk)], check=True,
                         capture_output=True, text=True).stdout
m = re.search(r"package: name='([^']+)' versionCode='(\d+)' versionName='([^']*)'", badging)
meta = {
    "package": m.group(1),
    "apk": apk_name,
    "version_code": int(m.group(2)),
    "version_name": m.group(3),
    "sha256": hashlib.sha256(apk.read_bytes()).hexdigest(),
    "sources_sha256": sources_digest(here),
    "min_sdk": int(re.search(r"sdkVersion:'(\d+)'", badging).group(1)),
    "target_sdk": int(re.search(r"targetSdkVersion:'(\d+)'", badging).group(1)),
}
(dest / "relay.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
print(f"installed {apk} ({meta['sha256'][:12]}…) and relay.json")
PY
fi
echo "$OUT/$APK_NAME"
