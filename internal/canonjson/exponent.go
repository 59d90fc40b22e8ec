package canonjson

import (
	"strconv"
	"strings"
)

// exponent is a power of ten of any size, as a number's literal may spell
// it ("1e9223372036854775807"): a sign and decimal digits without leading
// zeros ("" for zero). Its arithmetic only ever adds an int64, in time
// linear in its digits (math/big's decimal conversion is quadratic, and
// a request may carry an exponent of megabytes).
type exponent struct {
	neg    bool
	digits string
}

// parseExponent reads a JSON exponent's digits with an optional sign.
func parseExponent(s string) exponent {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
	return exponent{neg: neg && s != "", digits: s}
}

// small returns the exponent as an int64 when it has at most 17 digits.
func (e exponent) small() (int64, bool) {
	if len(e.digits) > 17 {
		return 0, false
	}
	n, _ := strconv.ParseInt("0"+e.digits, 10, 64)
	if e.neg {
		n = -n
	}
	return n, true
}

// add returns e + d.
func (e exponent) add(d int64) exponent {
	if n, ok := e.small(); ok {
		// |n| < 1e17 and |d| below 2^62 in every use: no overflow.
		return parseExponent(strconv.FormatInt(n+d, 10))
	}
	// |e| ≥ 1e17 > |d|: the sign stays, the magnitude moves by |d|.
	mag := d
	if mag < 0 {
		mag = -mag
	}
	if (d < 0) == e.neg {
		return exponent{neg: e.neg, digits: addDigits(e.digits, mag)}
	}
	return exponent{neg: e.neg, digits: subDigits(e.digits, mag)}
}

func (e exponent) sign() int {
	switch {
	case e.digits == "":
		return 0
	case e.neg:
		return -1
	}
	return 1
}

func (e exponent) String() string {
	switch {
	case e.digits == "":
		return "0"
	case e.neg:
		return "-" + e.digits
	}
	return e.digits
}

// addDigits returns the decimal digits a + d.
func addDigits(a string, d int64) string {
	out := []byte(a)
	carry := d
	for i := len(out) - 1; i >= 0 && carry > 0; i-- {
		v := int64(out[i]-'0') + carry%10
		carry /= 10
		if v >= 10 {
			v -= 10
			carry++
		}
		out[i] = byte('0' + v)
	}
	if carry > 0 {
		return strconv.FormatInt(carry, 10) + string(out)
	}
	return string(out)
}

// subDigits returns the decimal digits a - d, for a > d.
func subDigits(a string, d int64) string {
	out := []byte(a)
	borrow := d
	for i := len(out) - 1; i >= 0 && borrow > 0; i-- {
		v := int64(out[i]-'0') - borrow%10
		borrow /= 10
		if v < 0 {
			v += 10
			borrow++
		}
		out[i] = byte('0' + v)
	}
	return strings.TrimLeft(string(out), "0")
}
