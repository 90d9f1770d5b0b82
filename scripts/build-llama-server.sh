#!/usr/bin/env bash
# Build llama.cpp's llama-server offline from the llama.cpp source bundled in PyPI's
# llama-cpp-python sdist, and cache the binary outside the repo keyed by version so that
# reruns (and CI) are instant.
#
# Usage: scripts/build-llama-server.sh            prints the path of the binary on stdout
#        scripts/build-llama-server.sh --cached-only  the same, or exit 1 if it is not built yet
# Env:   LLAMA_CPP_PYTHON_VERSION  pin a version (default: newest cached, else newest on PyPI)
#        LLAMA_CPP_PYTHON_SDIST    use this sdist file instead of downloading one
#        INFERBOARD_BUILD_JOBS     parallel compile jobs (default 2)
#        PIP                       pip to use (default: the repo's .venv pip, else pip)
set -euo pipefail

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/inferboard"
jobs="${INFERBOARD_BUILD_JOBS:-2}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pip="${PIP:-}"
if [[ -z "$pip" ]]; then
    if [[ -x "$repo_root/.venv/bin/pip" ]]; then pip="$repo_root/.venv/bin/pip"; else pip="pip"; fi
fi
log() { echo "build-llama-server: $*" >&2; }

cached_binary() {
    local dir="$cache_root/llama-server-$1"
    [[ -x "$dir/llama-server" ]] && echo "$dir/llama-server"
}

version="${LLAMA_CPP_PYTHON_VERSION:-}"
if [[ -z "$version" && -z "${LLAMA_CPP_PYTHON_SDIST:-}" ]]; then
    # Newest version already built: no network needed on reruns.
    newest="$(ls -d "$cache_root"/llama-server-* 2>/dev/null | sed 's/.*llama-server-//' | sort -V | tail -n 1 || true)"
    if [[ -n "$newest" ]] && cached_binary "$newest"; then exit 0; fi
fi
if [[ -n "$version" ]] && cached_binary "$version"; then exit 0; fi
if [[ "${1:-}" == "--cached-only" ]]; then exit 1; fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

sdist="${LLAMA_CPP_PYTHON_SDIST:-}"
if [[ -z "$sdist" ]]; then
    spec="llama-cpp-python${version:+==$version}"
    log "downloading the $spec sdist"
    "$pip" download --quiet --no-binary :all: --no-deps "$spec" -d "$work/dl" >&2
    sdist="$(ls "$work"/dl/llama_cpp_python-*.tar.gz | head -n 1)"
fi
version="$(basename "$sdist" | sed -E 's/^llama_cpp_python-(.+)\.tar\.gz$/\1/')"
if cached_binary "$version"; then exit 0; fi

log "unpacking $sdist (version $version)"
tar -xzf "$sdist" -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
[[ -f "$src/CMakeLists.txt" ]] || { log "no vendor/llama.cpp in $sdist"; exit 1; }

log "configuring (this takes a few minutes on $jobs jobs)"
started=$SECONDS
# Static libraries so the cached binary runs on its own; no UI, no TLS, no curl: tests
# only talk to it over loopback. Only the llama-server target is built, on the CPU backend
# alone (no GPU backend is enabled). The tests serve a tiny generated model, so the CPU
# backend's optional llamafile sgemm kernels (one of its largest sources) buy nothing here
# and only lengthen a cold build on CI's two cores; warnings are not collected either.
# -O1 instead of Release's -O3: most of a cold build is the compiler inlining llama.cpp's
# templates, and the tests' model is so small that its speed is not what they measure.
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DGGML_LLAMAFILE=OFF -DLLAMA_ALL_WARNINGS=OFF >&2
cmake --build "$work/build" --target llama-server -j "$jobs" >&2
log "compiled in $((SECONDS - started)) s on $jobs jobs"

built="$(find "$work/build" -name llama-server -type f -perm -u+x | head -n 1)"
[[ -n "$built" ]] || { log "the build produced no llama-server"; exit 1; }
dest="$cache_root/llama-server-$version"
mkdir -p "$cache_root"
# Copy into a temporary directory then rename, so a half-written cache is never used.
staging="$(mktemp -d "$cache_root/.staging-XXXXXX")"
cp "$built" "$staging/llama-server"
echo "$version" > "$staging/VERSION"
rm -rf "$dest"
mv "$staging" "$dest"
log "built $dest/llama-server"
echo "$dest/llama-server"
