package placement

import (
	"errors"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string // "" for valid input
	}{
		{name: "accepts an empty input", in: Input{}},
		{
			name: "accepts weight 0 as the default and any ordinals",
			in: Input{Pods: []int{5, 0, 9}, PodCapacity: 3, Targets: []Target{{Name: "a"}, {Name: "b", Weight: MaxWeight}},
				Current: map[string]int{"a": 12, "deleted": 0}},
		},
		{name: "rejects a negative pod ordinal", in: Input{Pods: []int{0, -2}}, want: "pods[1]: ordinal must not be negative, got -2"},
		{name: "rejects a pod listed twice", in: Input{Pods: []int{3, 1, 3}}, want: "pods[2]: duplicate pod ordinal 3"},
		{name: "rejects a negative capacity", in: Input{PodCapacity: -1}, want: "podCapacity: must not be negative, got -1"},
		{name: "rejects an empty name", in: Input{Targets: []Target{{Name: "a"}, {}}}, want: "targets[1]: name must not be empty"},
		{
			name: "rejects a negative weight",
			in:   Input{Targets: []Target{{Name: "a", Weight: -1}}},
			want: `targets[0]: weight of "a" must be from 1 to 1000000 (0 means 1), got -1`,
		},
		{
			name: "rejects a weight above MaxWeight",
			in:   Input{Targets: []Target{{Name: "a", Weight: MaxWeight + 1}}},
			want: `targets[0]: weight of "a" must be from 1 to 1000000 (0 means 1), got 1000001`,
		},
		{
			name: "rejects a target name given twice",
			in:   Input{Targets: []Target{{Name: "ns/r1"}, {Name: "ns/r2"}, {Name: "ns/r3"}, {Name: "ns/r1"}}},
			want: `targets[3]: duplicate target name "ns/r1"`,
		},
		{
			name: "rejects a negative current ordinal, naming the first such target alphabetically",
			in:   Input{Current: map[string]int{"z": -1, "b": -3, "a": 0}},
			want: `current["b"]: ordinal must not be negative, got -3`,
		},
		{
			name: "rejects a negative last ordinal, after the current ones",
			in:   Input{Current: map[string]int{"a": 0}, Last: map[string]int{"y": -2, "c": 1}},
			want: `last["y"]: ordinal must not be negative, got -2`,
		},
		{
			name: "reports pods before targets",
			in:   Input{Pods: []int{-1}, Targets: []Target{{}}},
			want: "pods[0]: ordinal must not be negative, got -1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
			var inputErr *InputError
			if !errors.As(err, &inputErr) {
				t.Errorf("Validate() returned %T, want *InputError", err)
			}
		})
	}
}
