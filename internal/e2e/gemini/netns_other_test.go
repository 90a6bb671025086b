//go:build !linux

package gemini

// loopbackUp is never needed off Linux: there is no `unshare -n` to run in.
func loopbackUp() error { return nil }
