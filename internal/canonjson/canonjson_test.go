package canonjson

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ 1 , 2.0 , 3e0 , -0 , -0.0 , 1.5 ] } `, `{"a":[1,2,3,0,0,1.5]}`},
		{`{"a":{"d":null,"c":true}}`, `{"a":{"c":true,"d":null}}`},
		{`"\u003ctag\u003e \u00e9"`, `"<tag> é"`},
		{`123456789012345678901234567890`, `1.2345678901234567890123456789e+29`},
		{`1e400`, `1e+400`},
		{`1.25e20`, `125000000000000000000`},
		{`1.25e30`, `1.25e+30`},
		{`[1000000000000000.0, 1000000000000000, 1e15, 1E+15, 10e14]`,
			`[1000000000000000,1000000000000000,1000000000000000,1000000000000000,1000000000000000]`},
		{`[0.000125, 1.25e-4, 125e-6]`, `[0.000125,0.000125,0.000125]`},
		{`[3e-25, 2.50, -7.0, 0.0e9, -0e-3]`, `[3e-25,2.5,-7,0,0]`},
	} {
		got, ok := String([]byte(tc.in))
		if !ok || got != tc.want {
			t.Errorf("String(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{`{"a":1} {"b":2}`, ` not json `, ``, `{`} {
		if got, ok := String([]byte(bad)); ok {
			t.Errorf("String(%q) = %q, accepted", bad, got)
		}
		if got := OrRaw([]byte(bad)); got != "raw:"+strings.TrimSpace(bad) {
			t.Errorf("OrRaw(%q) = %q", bad, got)
		}
	}
}

// FuzzCanonicalJSON checks that canonicalisation never fails on valid
// JSON, is idempotent, keeps the value's meaning, ignores key order and
// whitespace, and spells equal numbers alike.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"b":1,"a":[true,null,"x"]}`, `1.0`, `-0`, `"\ud800"`, `{"a":{"a":{"a":1}}}`,
		`123456789012345678901234567890`, `1e999`, "\xff", `{"a":1,}`, `[1,2,3e-7]`, `"<&>"`, `1000000000000000.0`,
		`[1e9223372036854775807, 10e9223372036854775806]`, `-1.5e-99999999999999999999999`, `0e99999999999999999999`, `1e-9223372036854775809`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, ok := String(in)
		if !json.Valid(in) || !ok {
			return // invalid, or valid JSON the decoder refuses (too deep)
		}
		if !json.Valid([]byte(c)) {
			t.Fatalf("canonical form of %q is not JSON: %q", in, c)
		}
		if again, _ := String([]byte(c)); again != c {
			t.Fatalf("not idempotent: %q → %q → %q", in, c, again)
		}
		a, b := exact(t, in), exact(t, []byte(c))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q → %q", in, c)
		}
		// Re-encoding with Go's key order and other number spellings gives
		// the same form.
		re, err := json.Marshal(respell(a))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := String(re); got != c {
			t.Fatalf("key order or spelling mattered: %q vs %q (from %q)", c, got, re)
		}
	})
}

// exactNum is a JSON number as an exact decimal, "-digits e exp" with
// no zero at either end of the digits ("0" for zero), so that meaning is
// compared without float64 rounding and whatever the size of the
// exponent (big.Rat refuses or takes forever on 1e9223372036854775807).
type exactNum string

// exact decodes raw with every number as an exact decimal.
func exact(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return rationals(v)
}

// exactDecimal spells the JSON number s as an exactNum.
func exactDecimal(s string) exactNum {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	mant, e, _ := strings.Cut(strings.ToLower(s), "e")
	exp, ok := new(big.Int).SetString(strings.TrimPrefix(e, "+"), 10)
	if !ok {
		exp = new(big.Int)
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp.Add(exp, big.NewInt(1))
	}
	if digits == "" {
		return "0"
	}
	return exactNum(sign + digits + "e" + exp.String())
}

func rationals(v any) any {
	switch x := v.(type) {
	case json.Number:
		return exactDecimal(string(x))
	case []any:
		for i := range x {
			x[i] = rationals(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = rationals(x[k])
		}
	}
	return v
}

// respell turns every exact number back into a JSON number spelled
// unlike its canonical form: its digits with ".0" and an exponent.
func respell(v any) any {
	switch x := v.(type) {
	case exactNum:
		digits, exp, ok := strings.Cut(string(x), "e")
		if !ok {
			return json.Number("0.0e0")
		}
		return json.Number(digits + ".0e" + exp)
	case []any:
		for i := range x {
			x[i] = respell(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = respell(x[k])
		}
	}
	return v
}
