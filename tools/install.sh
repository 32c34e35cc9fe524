#!/bin/sh
# install.sh: `make install` and `make uninstall`.
#
#   tools/install.sh install ROOT SRC:DEST:MODE...   copy each SRC to ROOT/DEST
#   tools/install.sh uninstall ROOT                  remove what install put there
#
# ROOT is $(DESTDIR)$(PREFIX). install records in ROOT/share/onnxcc/manifest
# every file it wrote and every directory it had to make (ROOT itself and
# those above it included: ".", ".."), as "f PATH" and "d PATH" lines
# relative to ROOT, keeping the
# directories an earlier install made; uninstall removes those files, then
# those directories, deepest first, where they are empty. Nothing else is
# touched: a directory that was there before stays.
set -eu

MANIFEST=share/onnxcc/manifest
mode=${1:?usage: install.sh install|uninstall ROOT [SRC:DEST:MODE...]}
root=${2:?usage: install.sh install|uninstall ROOT [SRC:DEST:MODE...]}
shift 2

case $mode in
install)
	new=$(mktemp)
	trap 'rm -f "$new"' EXIT
	# the directories an earlier install made stay its to remove
	if [ -f "$root/$MANIFEST" ]; then
		grep '^d ' "$root/$MANIFEST" >>"$new" || true
	fi
	# ROOT and the missing directories above it: "d ..", "d .", top down
	up=.
	dir=$root
	made=
	while [ ! -d "$dir" ]; do
		made="d $up
$made"
		up=../$up
		dir=$(dirname "$dir")
	done
	if [ -n "$made" ]; then
		mkdir -p "$root"
		printf '%s' "$made" | sed 's|/\.$||' >>"$new"
	fi
	mkdirs() { # every missing directory on the way to $1, top down
		rel=
		old_ifs=$IFS
		IFS=/
		for part in $1; do
			rel=${rel:+$rel/}$part
			if [ ! -d "$root/$rel" ]; then
				mkdir "$root/$rel"
				echo "d $rel" >>"$new"
			fi
		done
		IFS=$old_ifs
	}
	for spec in "$@" "-:$MANIFEST:644"; do
		src=${spec%%:*}
		rest=${spec#*:}
		dest=${rest%:*}
		perm=${rest##*:}
		mkdirs "$(dirname "$dest")"
		if [ "$src" != - ]; then
			echo "$src -> $root/$dest (mode $perm)"
			cp "$src" "$root/$dest.tmp"
			chmod "$perm" "$root/$dest.tmp"
			mv "$root/$dest.tmp" "$root/$dest"
		fi
		echo "f $dest" >>"$new"
	done
	# one line each, directories in the order they were made
	awk '!seen[$0]++' "$new" >"$root/$MANIFEST"
	chmod 644 "$root/$MANIFEST"
	;;
uninstall)
	if [ ! -f "$root/$MANIFEST" ]; then
		echo "install.sh: no $root/$MANIFEST: nothing installed there" >&2
		exit 0
	fi
	list=$(cat "$root/$MANIFEST")
	echo "$list" | while read -r kind path; do
		if [ "$kind" = f ] && [ -e "$root/$path" ]; then
			echo "rm $root/$path"
			rm -f "$root/$path"
		fi
	done
	# directories deepest (last made) first; rmdir keeps any not empty
	echo "$list" | awk '$1 == "d" { d[n++] = substr($0, 3) } END { while (n--) print d[n] }' |
		while read -r path; do
			dir=$root/$path
			case $path in
			. | ..*) # ROOT or above it: drop a component per ".."
				dir=$root
				rest=$path
				while [ "$rest" != . ]; do
					dir=$(dirname "$dir")
					case $rest in ..) rest=. ;; *) rest=${rest#../} ;; esac
				done
				;;
			esac
			if rmdir "$dir" 2>/dev/null; then
				echo "rmdir $dir"
			fi
		done
	;;
*)
	echo "install.sh: unknown mode '$mode' (install or uninstall)" >&2
	exit 2
	;;
esac
