# Sourced by the *_setup.sh scripts: `check FILE PATTERN` stops the setup when a `sed` change to the authors'
# code did not apply (their file changed shape), rather than running their code unchanged without saying so.
check() {
  grep -q -- "$2" "$1" || { echo "patch did not apply to $1" >&2; exit 1; }
}
