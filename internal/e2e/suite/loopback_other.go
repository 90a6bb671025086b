//go:build !linux

package suite

// LoopbackUp is never needed off Linux: there is no `unshare -n` to run in.
func LoopbackUp() error { return nil }
