# Sourced by the benchmark scripts beside it (not run on its own): finds the repository, the
# binary to time (NOVEL_BIN, or target/release/novel) and hyperfine, or says what is missing and
# exits 2. Sets `repo`, `bin` and `hf`.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
bin="${NOVEL_BIN:-$repo/target/release/novel}"

hf="$(command -v hyperfine || true)"
if [[ -z "$hf" && -x "$HOME/.cargo/bin/hyperfine" ]]; then
  hf="$HOME/.cargo/bin/hyperfine"
fi
if [[ -z "$hf" ]]; then
  echo "需要 hyperfine 1.16 或更新：cargo install hyperfine@1.20.0 --locked（hyperfine 2 要求更新的 Rust；Debian 自带的 1.15 缺 --input）" >&2
  exit 2
fi
if [[ ! -x "$bin" ]]; then
  echo "找不到 $bin：先运行 cargo build --release，或用 NOVEL_BIN 指定" >&2
  exit 2
fi
