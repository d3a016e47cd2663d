#!/usr/bin/env bash
# Lints every Swift file git tracks with swift-format (the rules in .swift-format, warnings as
# errors). Fix with: git ls-files -z '*.swift' | xargs -0 swift format -i
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z '*.swift' | xargs -0 swift format lint --strict
