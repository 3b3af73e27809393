package balance

import (
	"errors"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	one := func(t Target) Input { return Input{Policy: Priority, Targets: []Target{t}} }
	tests := []struct {
		name string
		in   Input
		want string // "" for valid input
	}{
		{name: "accepts no targets", in: Input{Replicas: 4, Policy: Priority}},
		{name: "accepts no targets under the proportional policy", in: Input{Replicas: 4, Policy: Proportional}},
		{
			name: "accepts an order that leaves targets out, and max 0",
			in: Input{Replicas: 3, Policy: Priority, Order: []string{"b"},
				Targets: []Target{{Name: "a", Max: new(0)}, {Name: "b", Min: 2, Max: new(2)}}},
		},
		{
			name: "accepts the largest counts a Scale holds",
			in: Input{Replicas: MaxReplicas, Policy: Proportional, Targets: []Target{{Name: "a", Min: MaxReplicas, Max: new(MaxReplicas),
				Proportion: MaxReplicas, Started: MaxReplicas, NotStarted: MaxReplicas, Waiting: time.Hour}}},
		},
		{
			name: "ignores the order under the proportional policy",
			in:   Input{Policy: Proportional, Order: []string{"x", "x"}, Targets: []Target{{Name: "a", Proportion: 1}}},
		},
		{name: "rejects negative replicas", in: Input{Replicas: -1, Policy: Priority}, want: "replicas: replicas must be from 0 to 2147483647, got -1"},
		{
			name: "rejects more replicas than a Scale holds",
			in:   Input{Replicas: MaxReplicas + 1, Policy: Priority},
			want: "replicas: replicas must be from 0 to 2147483647, got 2147483648",
		},
		{name: "rejects a missing policy", in: Input{}, want: `policy: must be "priority" or "proportional", got ""`},
		{name: "rejects an unknown policy", in: Input{Policy: "even"}, want: `policy: must be "priority" or "proportional", got "even"`},
		{
			name: "rejects a negative startup timeout",
			in:   Input{Policy: Priority, StartupTimeout: -time.Second},
			want: "startupTimeout: must not be negative, got -1s",
		},
		{name: "rejects an empty name", in: one(Target{}), want: "targets[0]: name must not be empty"},
		{
			name: "rejects a target name given twice",
			in:   Input{Policy: Priority, Targets: []Target{{Name: "a"}, {Name: "b"}, {Name: "a"}}},
			want: `targets[2]: duplicate target name "a"`,
		},
		{name: "rejects a negative min", in: one(Target{Name: "a", Min: -1}), want: `targets[0]: min of "a" must be from 0 to 2147483647, got -1`},
		{name: "rejects a negative max", in: one(Target{Name: "a", Max: new(-2)}), want: `targets[0]: max of "a" must be from 0 to 2147483647, got -2`},
		{
			name: "rejects a max above what a Scale holds",
			in:   one(Target{Name: "a", Max: new(MaxReplicas + 1)}),
			want: `targets[0]: max of "a" must be from 0 to 2147483647, got 2147483648`,
		},
		{name: "rejects a min above the max", in: one(Target{Name: "a", Min: 3, Max: new(2)}), want: `targets[0]: min of "a" (3) is above its max (2)`},
		{
			name: "rejects a negative proportion",
			in:   one(Target{Name: "a", Proportion: -1}),
			want: `targets[0]: proportion of "a" must be from 0 to 2147483647, got -1`,
		},
		{
			name: "rejects a negative started count",
			in:   one(Target{Name: "a", Started: -1}),
			want: `targets[0]: started of "a" must be from 0 to 2147483647, got -1`,
		},
		{
			name: "rejects a negative not-started count",
			in:   one(Target{Name: "a", NotStarted: -3}),
			want: `targets[0]: notStarted of "a" must be from 0 to 2147483647, got -3`,
		},
		{
			name: "rejects a negative wait",
			in:   one(Target{Name: "a", Waiting: -time.Minute}),
			want: `targets[0]: waiting of "a" must not be negative, got -1m0s`,
		},
		{
			name: "rejects an order naming an unknown target",
			in:   Input{Policy: Priority, Order: []string{"a", "z"}, Targets: []Target{{Name: "a"}}},
			want: `order[1]: unknown target "z"`,
		},
		{
			name: "rejects an order naming a target twice",
			in:   Input{Policy: Priority, Order: []string{"a", "b", "a"}, Targets: []Target{{Name: "a"}, {Name: "b"}}},
			want: `order[2]: target "a" listed twice`,
		},
		{
			name: "rejects proportional targets without a positive proportion",
			in:   Input{Policy: Proportional, Targets: []Target{{Name: "a", Min: 1}, {Name: "b"}}},
			want: "targets: the proportional policy needs a positive proportion on at least one target",
		},
		{
			name: "reports replicas before targets",
			in:   Input{Replicas: -1, Policy: Priority, Targets: []Target{{}}},
			want: "replicas: replicas must be from 0 to 2147483647, got -1",
		},
		{
			name: "reports targets before the order",
			in:   Input{Policy: Priority, Order: []string{"z"}, Targets: []Target{{Name: "a", Min: -1}}},
			want: `targets[0]: min of "a" must be from 0 to 2147483647, got -1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if _, err := Balance(tt.in); err != nil {
					t.Fatalf("Balance() = %v, want nil", err)
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
			if _, balanceErr := Balance(tt.in); balanceErr == nil || balanceErr.Error() != tt.want {
				t.Errorf("Balance() = %v, want %q", balanceErr, tt.want)
			}
		})
	}
}
