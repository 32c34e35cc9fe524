/* templates/str_split.c: StringSplit of one string, as Python's str.split:
 * at each occurrence of delim (dlen > 0: empty tokens kept), or at runs of
 * whitespace (delim "": no empty tokens, leading/trailing runs dropped);
 * after maxsplit splits (>= 0) the rest is one token. Returns the token
 * count; with out, writes the tokens (NUL-terminated, into buf, which needs
 * strlen(s) + 1 bytes) to out[0..cnt) and "" to out[cnt..width).
 * Whitespace is ASCII (and \x1c-\x1f, as Python); Unicode spaces are not.
 */
OX_STATIC int ox_split_ws(char ch)
{
	unsigned char c = (unsigned char)ch;
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

OX_STATIC int64_t ox_split(const char *s, const char *delim, int64_t maxsplit, const char **out, int64_t width,
			char *buf)
{
	size_t dlen = strlen(delim);
	int64_t cnt = 0;
	const char *p = s;
	for (;;) {
		const char *e;
		if (!dlen) {
			while (*p && ox_split_ws(*p))
				p++;
			if (!*p)
				break;
			e = p;
			if (maxsplit >= 0 && cnt == maxsplit)
				e += strlen(e);
			else
				while (*e && !ox_split_ws(*e))
					e++;
		} else {
			e = maxsplit >= 0 && cnt == maxsplit ? NULL : strstr(p, delim);
			if (!e)
				e = p + strlen(p);
		}
		if (out) {
			size_t len = (size_t)(e - p);
			memcpy(buf, p, len);
			buf[len] = 0;
			out[cnt] = buf;
			buf += len + 1;
		}
		cnt++;
		if (!*e)
			break;
		p = e + dlen;
	}
	for (int64_t k = cnt; out && k < width; k++)
		out[k] = "";
	return cnt;
}
