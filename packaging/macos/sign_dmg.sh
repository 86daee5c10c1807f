#!/usr/bin/env bash
# Sign, notarize and staple a .dmg whose app was signed during the build
# (SUBTITLER_CODESIGN_IDENTITY set for packaging/build.py). Runs only with these variables:
#   SUBTITLER_CODESIGN_IDENTITY  "Developer ID Application: Name (TEAMID)"
#   APPLE_ID, APPLE_TEAM_ID, APPLE_APP_PASSWORD  (an app-specific password of the Apple ID)
#   packaging/macos/sign_dmg.sh dist/subtitler-0.1.0-macos-arm64.dmg
set -euo pipefail
dmg="$1"
: "${SUBTITLER_CODESIGN_IDENTITY:?}" "${APPLE_ID:?}" "${APPLE_TEAM_ID:?}" "${APPLE_APP_PASSWORD:?}"
codesign --force --timestamp --sign "$SUBTITLER_CODESIGN_IDENTITY" "$dmg"
xcrun notarytool submit "$dmg" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
  --password "$APPLE_APP_PASSWORD" --wait --timeout 30m
xcrun stapler staple "$dmg"
spctl --assess --type open --context context:primary-signature --verbose "$dmg"
