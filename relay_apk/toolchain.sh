#!/usr/bin/env bash
# Fetch the relay's Android toolchain pieces that bookworm no longer ships: dx
# (dalvik-exchange) and android.jar API 23 (libandroid-23-java), from Debian bullseye.
# Idempotent; nothing is installed system-wide: a private apt configuration downloads the
# .debs and dpkg-deb extracts them into relay_apk/.toolchain/ (git-ignored).
# The bookworm packages (aapt zipalign apksigner android-framework-res junit4 + a JDK) are
# installed by `./dev setup --system`; this script only checks them (and installs them
# when run as root on a machine that lacks them).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
TC="$HERE/.toolchain"
ROOTFS="$TC/root"
STAMP="$TC/.complete"
BULLSEYE_PACKAGES=(dalvik-exchange libandroid-23-java)
BOOKWORM_PACKAGES=(aapt zipalign apksigner android-framework-res junit4 default-jdk-headless)

log() { printf '==> %s\n' "$*" >&2; }

check_bookworm() {
    local missing=() p
    for p in "${BOOKWORM_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" = 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    else
        echo "missing Debian packages: ${missing[*]} — run: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
}

# The mirror this machine already uses for Debian (deb822 or one-line format).
mirror_host() {
    local uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '/^deb / && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' \
              /etc/apt/sources.list)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}

# Bullseye moves to archive.debian.org once its LTS ends; try the local mirror first.
ARCHIVE_MIRROR=http://archive.debian.org/debian

fetch_bullseye() {
    fetch_from "$(mirror_host)" || {
        log "the configured mirror has no bullseye; trying $ARCHIVE_MIRROR"
        fetch_from "$ARCHIVE_MIRROR"
    }
}

fetch_from() {
    local apt="$TC/apt" mirror="$1"
    rm -rf "$apt" "$TC/debs"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$TC/debs"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bullseye main" \
        > "$apt/sources.list"
    local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=-"
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
                -o "Dir::State::status=/dev/null" -o "APT::Get::List-Cleanup=0"
                -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root" -q)
    log "fetching ${BULLSEYE_PACKAGES[*]} from Debian bullseye ($mirror)"
    # apt verifies the Release signature (signed-by) and every .deb checksum
    apt-get "${opts[@]}" update >&2 || return 1
    (cd "$TC/debs" && apt-get "${opts[@]}" download "${BULLSEYE_PACKAGES[@]}" >&2) || return 1
    rm -rf "$ROOTFS"
    mkdir -p "$ROOTFS"
    local deb
    for deb in "$TC"/debs/*.deb; do dpkg-deb -x "$deb" "$ROOTFS"; done
}

check_bookworm
DX_JAR="$ROOTFS/usr/share/java/com.android.dx.jar"
ANDROID_JAR="$ROOTFS/usr/share/java/com.android.android-23.jar"
if [ ! -f "$STAMP" ] || [ ! -f "$DX_JAR" ] || [ ! -f "$ANDROID_JAR" ]; then
    fetch_bullseye
fi
for f in "$DX_JAR" "$ANDROID_JAR"; do
    [ -f "$f" ] || { echo "toolchain incomplete: $f missing" >&2; exit 1; }
done
touch "$STAMP"
echo "$TC"
