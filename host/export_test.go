package host

// WaitRetired waits until every retired plugin generation has been closed
// (for tests that count what old generations leave behind).
func (h *Host) WaitRetired() { h.retiring.Wait() }
