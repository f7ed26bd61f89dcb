#!/usr/bin/env bash
# Installs everything kiln needs to build, test, fuzz and benchmark, from
# Debian's packages only. Idempotent: packages already present are skipped by
# apt-get, and the index is refreshed at most once per run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  ccache  # the compiler cache scripts/test.sh uses (outside the clone)
  clang clang-tools clang-format clang-tidy llvm libclang-rt-dev
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsimdjson-dev nlohmann-json3-dev
  afl++ cppcheck python3 python3-numpy zip unzip
  pybind11-dev python3-dev python3-pytest python3-venv
  # the WebAssembly build of js/ (its optimizer runs on node-acorn)
  emscripten node-acorn binaryen
  chromium  # the browser page's test (tests/browser/), headless
)
# The C ABI's installed-consumer test (scripts/test.sh) builds a C program
# with `pkg-config --cflags --libs kiln`.
packages+=(pkgconf)
# Remote files: `kiln validate URL` is built on libcurl; the HTTP tests start
# their own nginx on 127.0.0.1; `python -m kiln.scan` runs on Dask over fsspec.
packages+=(libcurl4-openssl-dev nginx-light python3-distributed python3-fsspec python3-aiohttp python3-requests)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all packages present"

# The GGUF differential suite's reference reader, @huggingface/gguf, pinned
# in tests/loaders/gguf-js/package-lock.json (Node 20 and npm are expected on
# the machine). Skipped when already installed.
gguf_js="$(cd "$(dirname "$0")/.." && pwd)/tests/loaders/gguf-js"
if [ ! -d "$gguf_js/node_modules/@huggingface/gguf" ]; then
  if command -v npm >/dev/null; then
    (cd "$gguf_js" && npm ci --no-audit --no-fund --silent)
    echo "setup: @huggingface/gguf installed for tests/loaders/gguf-js"
  else
    echo "setup: npm not found; tests/loaders/gguf-js cannot run"
  fi
fi

# The safetensors differential suite's reader of the Hub, @huggingface/hub
# (parseSafetensorsMetadata), pinned in tests/loaders/hub-js/package-lock.json.
# Skipped when already installed.
hub_js="$(cd "$(dirname "$0")/.." && pwd)/tests/loaders/hub-js"
if [ ! -d "$hub_js/node_modules/@huggingface/hub" ]; then
  if command -v npm >/dev/null; then
    (cd "$hub_js" && npm ci --no-audit --no-fund --silent)
    echo "setup: @huggingface/hub installed for tests/loaders/hub-js"
  else
    echo "setup: npm not found; tests/loaders/hub-js cannot run"
  fi
fi

# The npm package's development dependency, typescript, pinned in
# js/package-lock.json: js/test/ checks the declarations with it (tsc) and
# lints the sources with its parser. Skipped when already installed.
js_pkg="$(cd "$(dirname "$0")/.." && pwd)/js"
if [ ! -d "$js_pkg/node_modules/typescript" ]; then
  if command -v npm >/dev/null; then
    (cd "$js_pkg" && npm ci --no-audit --no-fund --silent)
    echo "setup: typescript installed for js/"
  else
    echo "setup: npm not found; js/test cannot check the declarations"
  fi
fi

# The browser page's test (tests/browser/): playwright-core, pinned in
# tests/browser/package-lock.json; it drives Debian's chromium, so no browser
# is downloaded. Skipped when already installed.
browser_test="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
if [ ! -d "$browser_test/node_modules/playwright-core" ]; then
  if command -v npm >/dev/null; then
    (cd "$browser_test" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
    echo "setup: playwright-core installed for tests/browser"
  else
    echo "setup: npm not found; tests/browser cannot run"
  fi
fi
