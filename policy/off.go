package policy

import "fmt"

// offOrDefault resolves a threshold that a No… switch turns off: with off
// set it is 0 (off), zero means def, any other value is itself. A
// negative value is an error naming the switch (what, e.g. "NoClearOld
// turns the trigger off"): read as the default it would turn a rule the
// caller meant off back on.
func offOrDefault(field string, v, def int, off bool, what string) (int, error) {
	switch {
	case v < 0:
		return 0, fmt.Errorf("%s %d is negative: 0 is the default (%d), %s", field, v, def, what)
	case off:
		return 0, nil
	case v == 0:
		return def, nil
	}
	return v, nil
}
