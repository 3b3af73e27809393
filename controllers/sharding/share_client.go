package sharding

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// shareClient is the sharded reconciler's client: reads of the kinds the share holds (Kinds) go to the share's
// cache that holds them, every other read and every write to the client it wraps.
//
// A read no synced cache serves (no Cluster objects cached yet, a namespace's Targets outside the share or
// not synced yet) goes to the API server: the reconciler reconciles only covered Clusters
// (shareCaches.covers), so such reads come from watch mappings and from the clean-up after a deleted
// Cluster, which must see what exists.
type shareClient struct {
	client.Client
	share *shareCaches
	// live reads the API server.
	live client.Reader
}

func (c *shareClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !c.share.routes(obj) {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	if cached := c.share.reader(obj, key.Namespace); cached != nil {
		return cached.Get(ctx, key, obj, opts...)
	}
	return c.live.Get(ctx, key, obj, opts...)
}

func (c *shareClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if !c.share.routes(list) {
		return c.Client.List(ctx, list, opts...)
	}
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.Namespace == "" {
		return c.listShare(ctx, list, opts...)
	}
	if cached := c.share.reader(list, o.Namespace); cached != nil {
		return cached.List(ctx, list, opts...)
	}
	return c.live.List(ctx, list, opts...)
}

// listShare lists across every namespace of the share (a Node's collector pods): what the replica does not
// reconcile it need not see.
func (c *shareClient) listShare(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return listEach(ctx, list, c.share.readers(list), nil, opts...)
}

// listEach fills list with the items each reader lists, in turn, that keep accepts (nil keeps every one);
// keep is given the index of the reader and the item.
func listEach(ctx context.Context, list client.ObjectList, readers []client.Reader,
	keep func(reader int, obj client.Object) bool, opts ...client.ListOption) error {
	var items []runtime.Object
	for i, reader := range readers {
		part, ok := list.DeepCopyObject().(client.ObjectList)
		if !ok {
			return fmt.Errorf("copy list %T", list)
		}
		if err := reader.List(ctx, part, opts...); err != nil {
			return err
		}
		got, err := meta.ExtractList(part)
		if err != nil {
			return fmt.Errorf("read list %T: %w", list, err)
		}
		for _, item := range got {
			if keep != nil {
				obj, ok := item.(client.Object)
				if !ok {
					return fmt.Errorf("list %T holds %T", list, item)
				}
				if !keep(i, obj) {
					continue
				}
			}
			items = append(items, item)
		}
	}
	if err := meta.SetList(list, items); err != nil {
		return fmt.Errorf("fill list %T: %w", list, err)
	}
	return nil
}

// Client is the Cluster reconciler's client under sharding: reads of the kinds the share holds come from this
// replica's caches of its share (from the API server while none holds them), every other read and every write
// go to c.
func (s *Member) Client(c client.Client) client.Client {
	return &shareClient{Client: c, share: s.share, live: s.live}
}
