package pgtest

// Down stops the cluster (fast shutdown, so open connections break) and
// keeps its data: clients meet a server that is gone until Up.
func (s *Server) Down() error { return s.ctl("stop", "-m", "fast") }

// Up starts a cluster Down stopped, on the same socket with the same data.
func (s *Server) Up() error { return s.ctl("start") }
