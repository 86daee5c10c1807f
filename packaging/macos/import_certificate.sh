#!/usr/bin/env bash
# Import a Developer ID certificate into a temporary keychain (CI only).
#   MACOS_CERTIFICATE: base64 of the .p12; MACOS_CERTIFICATE_PASSWORD: its password.
set -euo pipefail
: "${MACOS_CERTIFICATE:?}" "${MACOS_CERTIFICATE_PASSWORD:?}"
keychain="$RUNNER_TEMP/signing.keychain-db"
kc_pass="$(uuidgen)"
p12="$RUNNER_TEMP/certificate.p12"
echo "$MACOS_CERTIFICATE" | base64 --decode > "$p12"
security create-keychain -p "$kc_pass" "$keychain"
security set-keychain-settings -lut 21600 "$keychain"
security unlock-keychain -p "$kc_pass" "$keychain"
security import "$p12" -P "$MACOS_CERTIFICATE_PASSWORD" -A -t cert -f pkcs12 -k "$keychain"
security set-key-partition-list -S apple-tool:,apple: -k "$kc_pass" "$keychain"
security list-keychains -d user -s "$keychain" $(security list-keychains -d user | tr -d '"')
rm -f "$p12"
