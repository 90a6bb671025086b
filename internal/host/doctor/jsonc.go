package doctor

// StripJSONC turns JSON with comments (// and /* */) and trailing commas,
// which some hosts accept in a settings file, into the JSON it stands
// for: each comment and each comma before a closing } or ] becomes
// blanks, line breaks kept, so that every byte keeps its offset and
// every setting its line, and a doctor reads the file with DecodeJSON
// and places its findings with File as in any JSON file. Strings are
// left as they are; anything else that is not JSON stays, for
// DecodeJSON to refuse.
func StripJSONC(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	// First the comments, then the commas they may have hidden from a
	// closing bracket: a, /* x */ } ends with a trailing comma too.
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"':
			i = stringEnd(out, i)
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			end := i
			for end < len(out) && out[end] != '\n' {
				end++
			}
			blank(i, end)
			i = end
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			end := i + 2
			for end+1 < len(out) && (out[end] != '*' || out[end+1] != '/') {
				end++
			}
			end = min(end+2, len(out))
			blank(i, end)
			i = end - 1
		}
	}
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '"':
			i = stringEnd(out, i)
		case ',':
			next := i + 1
			for next < len(out) && (out[next] == ' ' || out[next] == '\t' || out[next] == '\n' || out[next] == '\r') {
				next++
			}
			if next < len(out) && (out[next] == '}' || out[next] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}

// stringEnd is the index of the quote that closes the JSON string
// opening at start, or the last index when none does.
func stringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(data) - 1
}
