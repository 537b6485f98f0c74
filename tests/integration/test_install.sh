#!/usr/bin/env bash
# make install: the binary, libsilt, silt.h, silt.pc, DuckDB's library, the man
# page and completions land under PREFIX (inside DESTDIR); the installed tree
# works from anywhere — moved to another place, run from another directory,
# with no build or source tree on its library path. libduckdb is not linked
# but loaded by the first query from the install's lib/; without it queries
# fail with one line and the other commands work.
source "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$SILT")" && pwd)
DEST="$T_DIR/dest"
DESTDIR="$DEST" cmake --install "$BUILD" --prefix /opt/silt >"$T_DIR/install.log" 2>&1 \
    || fail "cmake --install failed: $(cat "$T_DIR/install.log")"
pass
P="$DEST/opt/silt"
for f in bin/silt lib/libsilt.a lib/libduckdb.so include/silt.h lib/pkgconfig/silt.pc share/man/man1/silt.1 \
         share/bash-completion/completions/silt share/zsh/site-functions/_silt; do
    [ -f "$P/$f" ] || fail "not installed: $f"
    pass
done
# RUNPATH relative to the binary, never into the build or source tree
RP=$(readelf -d "$P/bin/silt" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
assert_eq "$RP" '$ORIGIN/../lib' "RUNPATH"
grep -qF "$SILT_SOURCE_DIR" <<<"$(readelf -d "$P/bin/silt")" && fail "the installed binary refers to the source tree"
pass

# move the tree (relocatable), then use it from another directory
mv "$P" "$T_DIR/moved"
P="$T_DIR/moved"
mkdir -p "$T_DIR/elsewhere" && cd "$T_DIR/elsewhere"
# libduckdb is not linked but dlopen'ed by the first query, through the
# RUNPATH: from the install, never from the build tree
readelf -d "$P/bin/silt" | grep -q 'NEEDED.*libduckdb' && fail "the installed silt links libduckdb at load time"
pass
env -u LD_LIBRARY_PATH "$P/bin/silt" --version >out.txt || fail "installed silt does not run"
assert_eq "$(cat out.txt)" "silt 0.1.0" "installed --version"
env -u LD_LIBRARY_PATH "$P/bin/silt" init >/dev/null
env -u LD_LIBRARY_PATH "$P/bin/silt" new t >/dev/null
env -u LD_LIBRARY_PATH "$P/bin/silt" sql 'SELECT * FROM (VALUES (1), (2)) v(id)' --format parquet --output t.parquet
env -u LD_LIBRARY_PATH "$P/bin/silt" ingest t t.parquet >/dev/null
assert_eq "$(env -u LD_LIBRARY_PATH "$P/bin/silt" sql 'SELECT sum(id) AS s FROM t' --format csv)" "s
3" "installed silt queries (DuckDB from the install)"
LD_DEBUG=files LD_DEBUG_OUTPUT="$T_DIR/ld" env -u LD_LIBRARY_PATH "$P/bin/silt" sql 'SELECT 1' >/dev/null
grep -qF "calling init: $P/bin/../lib/libduckdb.so" "$T_DIR"/ld.* \
    || fail "libduckdb not from the install: $(grep -h 'file=.*duckdb' "$T_DIR"/ld.*)"
pass
# without the library, queries fail with one line naming it, the rest works
mv "$P/lib/libduckdb.so" "$T_DIR/libduckdb.so.away"
set +e
env -u LD_LIBRARY_PATH "$P/bin/silt" sql 'SELECT sum(id) AS s FROM t' >out.txt 2>err.txt
rc=$?
set -e
assert_eq "$rc" 1 "exit code of a query without libduckdb"
assert_eq "$(cat err.txt)" "silt: cannot load the DuckDB library libduckdb.so: libduckdb.so: cannot open shared object \
file: No such file or directory (silt needs it for queries: install it in the lib directory beside silt's bin, or name \
its directory in LD_LIBRARY_PATH)" "error without libduckdb"
assert_eq "$(env -u LD_LIBRARY_PATH "$P/bin/silt" list | sed -n '2s/ .*//p')" "t" "silt list without libduckdb"
mv "$T_DIR/libduckdb.so.away" "$P/lib/libduckdb.so"

# pkg-config finds the relocated prefix; a program builds and links against it
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
assert_eq "$(pkg-config --modversion silt)" "0.1.0" "pkg-config version"
assert_contains "$(pkg-config --cflags silt)" "-I$P/lib/pkgconfig/../../include"
cat >prog.c <<'C'
#include <silt.h>
#include <stdio.h>
int main(void)
{
    silt_workspace *ws;
    if (silt_workspace_open(&ws, ".") < 0) {
        fprintf(stderr, "%s\n", silt_error_last());
        return 1;
    }
    char **names;
    silt_dataset_list(&names, ws);
    for (size_t i = 0; names[i]; i++)
        printf("%s %s\n", SILT_VERSION, names[i]);
    silt_strv_free(names);
    silt_workspace_free(ws);
    return 0;
}
C
# shellcheck disable=SC2046
cc -o prog prog.c $(pkg-config --cflags --libs silt) 2>cc.err || fail "linking against libsilt: $(cat cc.err)"
pass
assert_eq "$(./prog)" "0.1.0 t" "program linked with libsilt"

# the man page and completions are the binary's own
assert_eq "$(cat "$P/share/man/man1/silt.1")" "$("$P/bin/silt" help --man)" "installed man page"
assert_eq "$(cat "$P/share/bash-completion/completions/silt")" "$("$P/bin/silt" help --completion bash)" "bash completion"

done_tests
