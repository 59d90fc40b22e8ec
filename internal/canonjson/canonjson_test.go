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
		`123456789012345678901234567890`, `1e999`, "\xff", `{"a":1,}`, `[1,2,3e-7]`, `"<&>"`, `1000000000000000.0`} {
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

// exactNum is a JSON number as an exact rational, so that meaning is
// compared without float64 rounding.
type exactNum string

// exact decodes raw with every number as an exact rational.
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

func rationals(v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return exactNum("?" + string(x))
		}
		return exactNum(r.RatString())
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
// unlike its canonical form: an integer with ".0e0", a fraction with a
// trailing zero after its exact decimals.
func respell(v any) any {
	switch x := v.(type) {
	case exactNum:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return json.Number(strings.TrimPrefix(string(x), "?"))
		}
		if r.IsInt() {
			return json.Number(r.Num().String() + ".0e0")
		}
		n := 0
		for q := new(big.Rat).Set(r); !q.IsInt() && n < 1<<14; n++ {
			q.Mul(q, big.NewRat(10, 1))
		}
		return json.Number(r.FloatString(n) + "0")
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
