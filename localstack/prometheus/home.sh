# Where install.sh puts Debian's prometheus package (the files only: no service is started) and
# where its binary is then. Sourced by install.sh; the tests compute the same path.
prom_home="${XDG_CACHE_HOME:-$HOME/.cache}/phantom/prometheus"
prom_bin="$prom_home/usr/bin/prometheus"
