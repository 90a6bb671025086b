package codex

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// loopbackUp sets the lo interface up in the fresh network namespace
// unshare -n made (it starts down), with the same ioctl `ip link set lo up`
// uses, so the suite needs no iproute2.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	// struct ifreq: a 16-byte name, then a union whose first member here is
	// the short flags; 40 bytes in all on Linux.
	var ifr [40]byte
	copy(ifr[:], "lo")
	if err := ioctl(fd, syscall.SIOCGIFFLAGS, &ifr); err != nil {
		return err
	}
	flags := *(*uint16)(unsafe.Pointer(&ifr[16]))
	*(*uint16)(unsafe.Pointer(&ifr[16])) = flags | syscall.IFF_UP | syscall.IFF_RUNNING
	return ioctl(fd, syscall.SIOCSIFFLAGS, &ifr)
}

func ioctl(fd int, req uintptr, ifr *[40]byte) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(ifr))); errno != 0 {
		return errno
	}
	return nil
}

func fileOwner(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

func readAllLimited(r io.Reader, n int64) ([]byte, error) { return io.ReadAll(io.LimitReader(r, n)) }
