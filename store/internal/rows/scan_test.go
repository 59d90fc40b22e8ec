package rows

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestStrScans: both drivers' shapes of a text value (database/sql's
// string and []byte, pgx's bytes) read byte for byte, NULL as "" and not
// valid; anything else is an error.
func TestStrScans(t *testing.T) {
	tests := []struct {
		name      string
		src       any
		want      string
		wantValid bool
		wantErr   bool
	}{
		{"string", "héllo", "héllo", true, false},
		{"bytes", []byte("a\x00\xffb"), "a\x00\xffb", true, false},
		{"empty", "", "", true, false},
		{"empty bytes", []byte{}, "", true, false},
		{"null", nil, "", false, false},
		{"int", int64(3), "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, valid := "stale", true
			err := NullStr{&got, &valid}.Scan(tt.src)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NullStr.Scan(%#v) error %v", tt.src, err)
			}
			if err == nil && (got != tt.want || valid != tt.wantValid) {
				t.Errorf("NullStr.Scan(%#v) = %q, %v; want %q, %v", tt.src, got, valid, tt.want, tt.wantValid)
			}
			s := "stale"
			if err := (Str{&s}).Scan(tt.src); (err != nil) != tt.wantErr || (err == nil && s != tt.want) {
				t.Errorf("Str.Scan(%#v) = %q, %v", tt.src, s, err)
			}
			if b, ok := tt.src.([]byte); ok || tt.src == nil {
				if err := (NullStr{&got, &valid}).ScanBytes(b); err != nil || got != tt.want || valid != tt.wantValid {
					t.Errorf("NullStr.ScanBytes(%#v) = %q, %v, %v", b, got, valid, err)
				}
				if err := (Str{&s}).ScanBytes(b); err != nil || s != tt.want {
					t.Errorf("Str.ScanBytes(%#v) = %q, %v", b, s, err)
				}
			}
		})
	}
}

// fakeRows is a Query over canned rows of one column each.
func fakeRows(tables map[string][]any) Query {
	return func(sql string, args []any, row func(Scanner) error) error {
		for _, v := range tables[sql] {
			if err := row(scanFunc(func(dest ...any) error {
				*(dest[0].(*any)) = v
				return nil
			})); err != nil {
				return err
			}
		}
		return nil
	}
}

type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// TestRunStopsAtTheFirstError: steps run in order, each row through its
// function, and the first error stops the read, named by its step.
func TestRunStopsAtTheFirstError(t *testing.T) {
	q := fakeRows(map[string][]any{"a": {1, 2}, "b": {3}, "c": {4}})
	var seen []any
	collect := func(sc Scanner) error {
		var v any
		err := sc.Scan(&v)
		seen = append(seen, v)
		return err
	}
	boom := errors.New("boom")
	err := Run(q, Step{What: "as", SQL: "a", Row: collect}, Step{What: "bs", SQL: "b", Row: func(Scanner) error { return boom }},
		Step{What: "cs", SQL: "c", Row: collect})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "bs: ") {
		t.Errorf("Run = %v, want bs: boom", err)
	}
	if !reflect.DeepEqual(seen, []any{1, 2}) {
		t.Errorf("rows seen %v, want [1 2]", seen)
	}
	if err := Run(q, Step{What: "x", SQL: "a"}); err == nil {
		t.Error("a step without a row function ran")
	}
}

// FuzzStr: whichever driver delivers a column (database/sql as a string
// or bytes, pgx as bytes), Str and NullStr read the same bytes back.
func FuzzStr(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00b", "\xff\xfe", "é🙂"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fromString, fromBytes, fromPgx string
		var v1, v2, v3 bool
		if err := (NullStr{&fromString, &v1}).Scan(string(b)); err != nil {
			t.Fatal(err)
		}
		if err := (NullStr{&fromBytes, &v2}).Scan(b); err != nil {
			t.Fatal(err)
		}
		if err := (NullStr{&fromPgx, &v3}).ScanBytes(b); err != nil {
			t.Fatal(err)
		}
		if fromString != string(b) || fromBytes != string(b) || !v1 || !v2 {
			t.Fatalf("%q read as %q, %q", b, fromString, fromBytes)
		}
		if fromPgx != string(b) || v3 != (b != nil) {
			t.Fatalf("%q read by pgx as %q, valid %v", b, fromPgx, v3)
		}
	})
}
