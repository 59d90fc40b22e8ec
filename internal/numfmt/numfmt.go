// Package numfmt formats the figures harness prints (tables, audits, the
// log) the same way everywhere.
package numfmt

import "strconv"

// Thousands writes n with comma separators: 1234567 → "1,234,567".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}
