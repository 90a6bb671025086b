//go:build !linux

package copilot

// loopbackUp is never needed off Linux: there is no `unshare -n` to run in.
func loopbackUp() error { return nil }
