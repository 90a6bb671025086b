package doctor

import "testing"

// A path the host names lies under Root, but for the session's folders;
// it is shown as the host sees it, and a message about it too.
func TestMachine(t *testing.T) {
	m := Machine{Root: "/stage", Own: []string{"/work/repo", "/home/dev"}}
	for _, tc := range []struct{ host, disk string }{
		{"/usr/local/bin/spawngate", "/stage/usr/local/bin/spawngate"},
		{"/etc/spawngate/codex.yaml", "/stage/etc/spawngate/codex.yaml"},
		{"/home/dev/bin/spawngate", "/home/dev/bin/spawngate"},
		{"/work/repo/policy.yaml", "/work/repo/policy.yaml"},
		{"policy.yaml", "policy.yaml"},
	} {
		if got := m.OnDisk(tc.host); got != tc.disk {
			t.Errorf("OnDisk(%q) = %q, want %q", tc.host, got, tc.disk)
		}
		if got := m.Shown(tc.disk); got != tc.host {
			t.Errorf("Shown(%q) = %q, want %q", tc.disk, got, tc.host)
		}
	}
	if got, want := m.ShownIn("/stage/usr/local is writable by uid 1000"), "/usr/local is writable by uid 1000"; got != want {
		t.Errorf("ShownIn = %q, want %q", got, want)
	}
	for _, real := range []Machine{{}, {Root: "/"}} {
		if got := real.OnDisk("/usr/local/bin/spawngate"); got != "/usr/local/bin/spawngate" {
			t.Errorf("%+v: OnDisk = %q", real, got)
		}
		if got := real.ShownIn("/usr/x"); got != "/usr/x" {
			t.Errorf("%+v: ShownIn = %q", real, got)
		}
	}
}
