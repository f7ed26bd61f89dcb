# Sourced by the suites' run.sh: what every suite does before it runs its
# comparison. A suite whose reference reader cannot run here says "skipped"
# and why (exit 0); one that CI needs fails instead.

# The kiln binary given as the suite's one argument, as an absolute path.
loader_kiln() {
  realpath "${1:?usage: run.sh path/to/kiln}"
}

# need_npm_package SUITE DIR PACKAGE: node and npm (required under CI, else
# the suite is skipped), and PACKAGE installed in DIR from its
# package-lock.json (npm ci) when it is not there yet.
need_npm_package() {
  local suite=$1 dir=$2 package=$3
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    if [ "${CI:-}" = true ]; then
      echo "loaders/$suite: node and npm are required under CI"
      exit 1
    fi
    echo "skipped: node or npm not found"
    exit 0
  fi
  if [ ! -d "$dir/node_modules/$package" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
  fi
}

# skip_unless_set VAR WHY: a reference reader built or read outside this
# repository, named by the environment variable VAR; unset, the suite is
# skipped ("skipped: VAR is not set (WHY)").
skip_unless_set() {
  local var=$1 why=$2
  if [ -z "${!var:-}" ]; then
    echo "skipped: $var is not set ($why)"
    exit 0
  fi
}

# loader_fail SUITE MESSAGE: the suite cannot run as configured.
loader_fail() {
  echo "loaders/$1: $2"
  exit 1
}
