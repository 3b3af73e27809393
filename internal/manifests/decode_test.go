package manifests

import "testing"

func TestDecode(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		err      bool
	}{
		{"empty", "", nil, false},
		{"documents with empty ones between", "---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b}\n",
			[]string{"A/a", "B/b"}, false},
		{"json", `{"kind":"C","metadata":{"name":"c"}}`, []string{"C/c"}, false},
		{"broken yaml", "kind: [", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
