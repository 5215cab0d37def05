# Sourced by the *_setup.sh scripts: `archive CLONE COMMIT DEST [PATH...]` copies the authors' files at the pinned
# commit out of a clone of their repository (bench/parity/README.md) into DEST, leaving the clone as it is;
# `check FILE PATTERN` stops the setup when a `sed` change to the authors'
# code did not apply (their file changed shape), rather than running their code unchanged without saying so.
check() {
  grep -q -- "$2" "$1" || { echo "patch did not apply to $1" >&2; exit 1; }
}

# `baukit_without_images DIR`: baukit's package __init__ imports its image-folder helpers, which need torchvision;
# PyPI's torchvision is a CUDA build that does not load beside torch's CPU wheel, and nothing the authors use from
# baukit (TraceDict) needs them, so the two imports go.
baukit_without_images() {
  sed -i '/parallelfolder\|renormalize/d' "$1/baukit/__init__.py"
  ! grep -q 'parallelfolder\|renormalize' "$1/baukit/__init__.py" \
    || { echo "patch did not apply to $1/baukit/__init__.py" >&2; exit 1; }
}

archive() {
  local clone=$1 commit=$2 dest=$3
  shift 3
  git -C "$clone" cat-file -e "$commit^{commit}" 2>/dev/null || {
    echo "$clone: not a clone that holds commit $commit (bench/parity/README.md: git clone, then git checkout)" >&2
    exit 1
  }
  rm -rf "$dest" && mkdir -p "$dest"
  git -C "$clone" archive "$commit" "$@" | tar -x -C "$dest"
}
