package rejection

import (
	"reflect"
	"testing"
)

func output(name, fingerprint string) Object {
	return Object{Key: Key{Kind: KindOutput, Name: name}, Fingerprint: fingerprint}
}

func input(name, fingerprint string) Object {
	return Object{Key: Key{Kind: KindInput, Name: name}, Fingerprint: fingerprint}
}

func TestBlame(t *testing.T) {
	objects := []Object{output("prom", "p2"), output("file", "f1"), input("bus", "b1")}
	acceptedBefore := map[Key]string{{KindOutput, "prom"}: "p1", {KindOutput, "file"}: "f1", {KindInput, "bus"}: "b1"}
	tests := []struct {
		name      string
		message   string
		objects   []Object
		accepted  map[Key]string
		want      []Object
		wantBasis Basis
	}{
		{
			name:      "the objects the error names are blamed, whatever changed",
			message:   `validate error: output "file": unknown format "csv"`,
			objects:   objects,
			accepted:  acceptedBefore,
			want:      []Object{output("file", "f1")},
			wantBasis: Named,
		},
		{
			name:      "names in gNMIc's field paths count",
			message:   `'inputs[bus].format' expected type 'string'`,
			objects:   objects,
			want:      []Object{input("bus", "b1")},
			wantBasis: Named,
		},
		{
			name:      "a name inside a longer word is no mention",
			message:   `validate error: unknown key "filename" in prometheus settings`,
			objects:   objects,
			accepted:  acceptedBefore,
			want:      []Object{output("prom", "p2")},
			wantBasis: Changed,
		},
		{
			name:      "without a name, what changed since the collectors last accepted is blamed",
			message:   "validate error: listen address is not valid",
			objects:   objects,
			accepted:  acceptedBefore,
			want:      []Object{output("prom", "p2")},
			wantBasis: Changed,
		},
		{
			name:      "an object the collectors never took counts as changed",
			message:   "validate error: broker unreachable",
			objects:   append(objects[1:], output("kafka", "k1")),
			accepted:  map[Key]string{{KindOutput, "file"}: "f1", {KindInput, "bus"}: "b1"},
			want:      []Object{output("kafka", "k1")},
			wantBasis: Changed,
		},
		{
			name:      "when the collectors never accepted anything every object is blamed",
			message:   "validate error: something is wrong",
			objects:   objects,
			want:      []Object{input("bus", "b1"), output("file", "f1"), output("prom", "p2")},
			wantBasis: Whole,
		},
		{
			name:      "when nothing changed since the collectors accepted it every object is blamed",
			message:   "validate error: something is wrong",
			objects:   []Object{output("file", "f1")},
			accepted:  acceptedBefore,
			want:      []Object{output("file", "f1")},
			wantBasis: Whole,
		},
		{
			name:      "a configuration without outputs or inputs blames nothing",
			message:   "validate error: processor p1 unknown",
			wantBasis: Whole,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, basis := Blame(tt.message, tt.objects, tt.accepted)
			if !reflect.DeepEqual(got, tt.want) || basis != tt.wantBasis {
				t.Errorf("Blame = %v (%s), want %v (%s)", got, basis, tt.want, tt.wantBasis)
			}
		})
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		message, name string
		want          bool
	}{
		{`output "file": bad`, "file", true},
		{`outputs[file].format`, "file", true},
		{`open /data/file.`, "file", true},
		{`unknown key filename`, "file", false},
		{`my-file is broken`, "file", false},
		{`file_x and then file`, "file", true},
		{`anything`, "", false},
		{`prom-1 failed`, "prom-1", true},
	}
	for _, tt := range tests {
		if got := mentions(tt.message, tt.name); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tt.message, tt.name, got, tt.want)
		}
	}
}
