# man.awk: onnxcc's man page from its --help text (the `usage` string in
# main.c), so the two never disagree:
#
#   onnxcc --help | awk -v version="$(onnxcc --version)" -f tools/man.awk > onnxcc.1
#
# The help's shape, which main.c keeps: "usage: onnxcc ..." and its indented
# continuation lines (a line "       onnxcc ..." starts another form) are the
# SYNOPSIS; unindented lines up to the first option the DESCRIPTION; each
# "  -x[, --y]  text" line an option, continued by deeper-indented lines,
# whose argument is looked up in the synopsis ("[--cpu NAME]" gives
# "--cpu NAME"); "Exit status: ..." and the lines after it the EXIT STATUS.
# NAME and SEE ALSO are written here. Plain POSIX awk (Debian's mawk).

# roff: a backslash is \e; a line must not start with . or '
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
# option names: every hyphen a minus sign
function opt(s) {
	s = esc(s)
	gsub(/-/, "\\-", s)
	return s
}
# the text from position i of s up to its matching "]" (s[i-1] is "[")
function bracket(s, i,    d, j, c) {
	d = 1
	for (j = i; j <= length(s); j++) {
		c = substr(s, j, 1)
		if (c == "[")
			d++
		else if (c == "]" && --d == 0)
			break
	}
	return substr(s, i, j - i)
}
# an option's tag with its argument as the synopsis spells it
function tag(name,    i, rest, arg) {
	if (name ~ /,/)
		return "\\fB" opt(name) "\\fR"
	if ((i = index(syn, "[" name " ")) || (i = index(syn, "[" name "[")) || (i = index(syn, "[" name "]")))
		arg = substr(bracket(syn, i + 1), length(name) + 1)
	else if ((i = index(syn, " " name " "))) {
		rest = substr(syn, i + length(name) + 2)
		arg = " " (index(rest, " ") ? substr(rest, 1, index(rest, " ") - 1) : rest)
		if (arg ~ /^ [\[|-]/)
			arg = ""
	}
	if (arg == "")
		return "\\fB" opt(name) "\\fR"
	if (substr(arg, 1, 1) == "[")
		return "\\fB" opt(name) "\\fR[=\\fI" esc(substr(arg, 3, length(arg) - 3)) "\\fR]"
	return "\\fB" opt(name) "\\fR \\fI" esc(substr(arg, 2)) "\\fR"
}
# a synopsis form: no line break inside [...]
function form(s,    out, d, j, c) {
	s = opt(s)
	d = 0
	out = ""
	for (j = 1; j <= length(s); j++) {
		c = substr(s, j, 1)
		if (c == "[")
			d++
		else if (c == "]")
			d--
		out = out (c == " " && d > 0 ? "\\~" : c)
	}
	return out
}
function flush_opt() {
	if (oname != "") {
		opts_out = opts_out ".TP\n" tag(oname) "\n" esc(otext) "\n"
	}
	oname = ""
}

BEGIN {
	section = "syn"
	nforms = 0
	if (version == "")
		version = "onnxcc"
}
section == "syn" && /^usage: / {
	forms[++nforms] = substr($0, 8)
	next
}
section == "syn" && /^ +onnxcc / {
	sub(/^ +/, "")
	forms[++nforms] = $0
	next
}
section == "syn" && /^ / {
	sub(/^ +/, "")
	forms[nforms] = forms[nforms] " " $0
	next
}
section == "syn" {
	section = "desc"
	for (k = 1; k <= nforms; k++)
		syn = syn " " forms[k] " "
}
/^Exit status:/ {
	flush_opt()
	section = "exit"
	sub(/^Exit status: */, "")
}
section != "exit" && /^  -/ {
	flush_opt()
	section = "opts"
	# the option is the leading words that start with "-" ("-h, --help")
	oname = ""
	for (k = 1; k <= NF && $k ~ /^-/; k++)
		oname = oname (k > 1 ? " " : "") $k
	otext = ""
	for (; k <= NF; k++)
		otext = otext (otext == "" ? "" : " ") $k
	next
}
section == "opts" && /^   / {
	sub(/^ +/, "")
	otext = otext " " $0
	next
}
{
	if (section == "desc")
		desc = desc (desc == "" ? "" : "\n") esc($0)
	else if (section == "exit")
		exitst = exitst (exitst == "" ? "" : "\n") esc($0)
	else
		print "man.awk: unexpected help line: " $0 > "/dev/stderr"
}
END {
	flush_opt()
	print ".\\\" onnxcc.1: generated from onnxcc --help by tools/man.awk; do not edit"
	print ".TH ONNXCC 1 \"\" \"" esc(version) "\" \"User Commands\""
	print ".SH NAME"
	print "onnxcc \\- compile an ONNX model ahead of time into standalone C"
	print ".SH SYNOPSIS"
	for (k = 1; k <= nforms; k++) {
		s = forms[k]
		sub(/^onnxcc */, "", s)
		print ".SY onnxcc"
		print form(s)
		print ".YS"
	}
	print ".SH DESCRIPTION"
	print desc
	print ".SH OPTIONS"
	printf "%s", opts_out
	print ".SH EXIT STATUS"
	print exitst
	print ".SH SEE ALSO"
	print "\\fBcc\\fR(1), \\fBcmake\\fR(1)."
	print "The generated API, and the CMake package and Make include that run"
	print "onnxcc from a build: \\fIdocs/api.md\\fR and \\fIdocs/build\\-integration.md\\fR"
	print "in the onnxcc sources (installed in \\fIshare/doc/onnxcc\\fR)."
}
