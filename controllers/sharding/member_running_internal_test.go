package sharding

import (
	"context"
	"testing"
	"time"

	"github.com/gnmic-operator/gnmic-operator/internal/shard"
)

// MemberRunning says whether a member may be in the middle of a TargetSource sync it recorded: a replica
// waits for a running member's sync, and takes over a stopped member's at once.
func TestMemberRunningFollowsTheMembersLeases(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newMember(Options{Identity: "self", LeaseDuration: 6 * time.Second, Now: func() time.Time { return now }}, nil, nil)
	s.self = shard.Lease{Holder: "self", RenewTime: now, Duration: 6 * time.Second}

	steps := []struct {
		name   string
		apply  func()
		member string
		want   bool
	}{
		{"this replica", func() {}, "self", true},
		{"a member unseen before the Leases were listed", func() {}, "early", true},
		{"still, a minute later", func() { now = now.Add(time.Minute); s.self.RenewTime = now }, "early", true},
		{"the Leases are listed: an unseen member is first taken as running", func() { s.leasesSynced = true }, "late", true},
		{"unseen for less than a Lease duration", func() { now = now.Add(5 * time.Second) }, "late", true},
		{"unseen for a Lease duration", func() { now = now.Add(time.Second) }, "late", false},
		{"a renewed Lease", func() { s.observe(memberLease("other", now, nil)) }, "other", true},
		{"that Lease draining", func() {
			s.observe(memberLease("other", now.Add(time.Millisecond), map[string]string{shardLeavingAnnotation: "true"}))
		}, "other", true},
		{"that Lease expired", func() { now = now.Add(6 * time.Second) }, "other", false},
		{"that Lease marked dead", func() {
			s.observe(memberLease("other", now, map[string]string{shardDeadAnnotation: "true"}))
		}, "other", false},
		{"a member whose Lease showed up after it was asked about", func() {
			s.MemberRunning("joining")
			now = now.Add(10 * time.Second)
			s.observe(memberLease("joining", now, nil))
		}, "joining", true},
	}
	for _, step := range steps {
		step.apply()
		if got := s.MemberRunning(step.member); got != step.want {
			t.Errorf("%s: MemberRunning(%q) = %v, want %v", step.name, step.member, got, step.want)
		}
	}
	if _, kept := s.unseenMembers["joining"]; kept {
		t.Errorf("a member whose Lease showed up is still remembered as unseen")
	}
	now = now.Add(time.Minute)
	s.MemberRunning("another")
	if _, kept := s.unseenMembers["late"]; kept {
		t.Errorf("an unseen member is remembered past twice the Lease duration")
	}
}

// Objects assigned with Assigned (TargetSources) move when the members change: a round whose live members
// differ from the last round's tells the listeners, and a round with the same members does not.
func TestReassignTellsTheListenersWhenTheLiveMembersChange(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newMember(Options{Identity: "self", LeaseDuration: 6 * time.Second, Now: func() time.Time { return now }}, nil, store{})
	s.leasesSynced = true
	s.self = shard.Lease{Holder: "self", RenewTime: now, Duration: 6 * time.Second}
	told := 0
	s.OnMembersChanged(func() { told++ })

	steps := []struct {
		name  string
		apply func()
		want  int
	}{
		{"the first round", func() {}, 1},
		{"a round with the same members", func() {}, 1},
		{"a member joins", func() { s.observe(memberLease("other", now, nil)) }, 2},
		{"the next round", func() {}, 2},
		{"its Lease expires", func() { now = now.Add(7 * time.Second); s.self.RenewTime = now }, 3},
		{"another round, this replica renewed", func() { now = now.Add(time.Second); s.self.RenewTime = now }, 3},
	}
	for _, step := range steps {
		step.apply()
		s.reassign(context.Background())
		if told != step.want {
			t.Errorf("%s: the listeners were told %d times, want %d", step.name, told, step.want)
		}
	}
}
