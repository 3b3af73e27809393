package shard

import (
	"reflect"
	"testing"
	"time"
)

// t0 is the start of every test's clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const leaseDuration = 15 * time.Second

// renewed is a lease of holder renewed at t0+after.
func renewed(holder string, after time.Duration) Lease {
	return Lease{Holder: holder, RenewTime: t0.Add(after), Duration: leaseDuration}
}

func TestLeaseState(t *testing.T) {
	tests := []struct {
		name  string
		lease Lease
		at    time.Duration
		want  MemberState
	}{
		{"is ready while renewed in time", renewed("a", 0), 14 * time.Second, Ready},
		{"expires at renew time plus duration", renewed("a", 0), leaseDuration, Expired},
		{"stays expired after", renewed("a", 0), time.Hour, Expired},
		{"drains while leaving and renewed", Lease{Holder: "a", RenewTime: t0, Duration: leaseDuration, Leaving: true}, time.Second, Draining},
		{"expires while leaving", Lease{Holder: "a", RenewTime: t0, Duration: leaseDuration, Leaving: true}, leaseDuration, Expired},
		{"is dead once marked, even if renewed", Lease{Holder: "a", RenewTime: t0, Duration: leaseDuration, Dead: true}, 0, Dead},
		{"expires at once without a duration", Lease{Holder: "a", RenewTime: t0}, 0, Expired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.lease.State(t0.Add(tt.at)); got != tt.want {
				t.Errorf("State = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadyMembersListsReadyHoldersSortedOnce(t *testing.T) {
	leases := []Lease{
		renewed("c", 0), renewed("a", 0), renewed("a", time.Second),
		renewed("expired", -time.Hour),
		{Holder: "leaving", RenewTime: t0, Duration: leaseDuration, Leaving: true},
		{Holder: "dead", RenewTime: t0, Duration: leaseDuration, Dead: true},
		renewed("", 0),
	}
	if got, want := ReadyMembers(leases, t0.Add(time.Second)), []string{"a", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadyMembers = %v, want %v", got, want)
	}
}

func TestMayMarkDead(t *testing.T) {
	now := t0.Add(leaseDuration)
	tests := []struct {
		name        string
		self, other Lease
		want        bool
	}{
		{"lets a ready member mark an expired lease", renewed("b", 10*time.Second), renewed("a", 0), true},
		{"not a lease that is still valid", renewed("b", 10*time.Second), renewed("a", time.Second), false},
		{"not one already dead", renewed("b", 10*time.Second), Lease{Holder: "a", RenewTime: t0, Duration: leaseDuration, Dead: true}, false},
		{"not by a member whose own lease expired", renewed("b", 0), renewed("a", 0), false},
		{"not by a leaving member", Lease{Holder: "b", RenewTime: now, Duration: leaseDuration, Leaving: true}, renewed("a", 0), false},
		{"not its own lease", renewed("a", 10*time.Second), renewed("a", 0), false},
		{"not without a holder", renewed("b", 10*time.Second), renewed("", 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayMarkDead(tt.self, tt.other, now); got != tt.want {
				t.Errorf("MayMarkDead = %v, want %v", got, tt.want)
			}
		})
	}
}
