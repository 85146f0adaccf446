#!/usr/bin/env bash
# Runs every test of hetbal: unit, property, exhaustive, CLI and documentation tests.
# Installs nothing today: the default build needs only cargo.
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace --all-targets
cargo test --workspace --doc
