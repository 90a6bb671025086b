package main

import (
	"reflect"
	"testing"
)

func TestSplitCutsAtEachSeparator(t *testing.T) {
	got := split([]string{"--", "a", "-x", "--", "b", "--", "--", "c", "d"})
	want := [][]string{{"a", "-x"}, {"b"}, {"c", "d"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split = %q, want %q", got, want)
	}
	if got := split(nil); got != nil {
		t.Errorf("split(nil) = %q, want none", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), tc.in...)
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("median reordered its input: %v", tc.in)
		}
	}
}
