//go:build !unix

package workspace

import "os"

// openReadFlags: platforms without FIFOs open plainly.
const openReadFlags = os.O_RDONLY
