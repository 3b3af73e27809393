package fakecollector

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"

	tpb "github.com/openconfig/grpctunnel/proto/tunnel"
	"github.com/openconfig/grpctunnel/tunnel"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Device is a dial-in device for tests: it dials a tunnel server with the real grpctunnel client (as a router's
// gNMI agent configured for a gRPC tunnel does) and registers one target with its ID and type, until Close.
type Device struct {
	ID, Type string
	conn     *grpc.ClientConn
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
}

// DialIn connects a device to the tunnel server at addr, with TLS when tlsConfig is not nil (its RootCAs
// verify the server; its Certificates are the device's, when the server asks for one), and registers the
// target (id, typ). It returns once the server accepted the registration stream; the server learns of the
// target right after.
func DialIn(ctx context.Context, addr string, tlsConfig *tls.Config, id, typ string) (*Device, error) {
	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = credentials.NewTLS(tlsConfig)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("device %s: dial tunnel server %s: %w", id, addr, err)
	}
	client, err := tunnel.NewClient(tpb.NewTunnelClient(conn), tunnel.ClientConfig{
		// The collector opens sessions to the device through the tunnel; the emulation accepts and closes them.
		RegisterHandler: func(tunnel.Target) error { return nil },
		Handler:         func(_ tunnel.Target, rwc io.ReadWriteCloser) error { return rwc.Close() },
	}, map[tunnel.Target]struct{}{{ID: id, Type: typ}: {}})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("device %s: tunnel client: %w", id, err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := client.Register(runCtx); err != nil {
		cancel()
		_ = conn.Close()
		return nil, fmt.Errorf("device %s: register with tunnel server %s: %w", id, addr, err)
	}
	d := &Device{ID: id, Type: typ, conn: conn, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		client.Start(runCtx)
		d.err = client.Error()
	}()
	return d, nil
}

// Close ends the device's tunnel: the server deregisters its target.
func (d *Device) Close() error {
	d.cancel()
	err := d.conn.Close()
	<-d.done
	return err
}

// Done is closed when the device's tunnel ended (Close, or the server went away); Err then says why.
func (d *Device) Done() <-chan struct{} { return d.done }

// Err is why the tunnel ended, once Done is closed.
func (d *Device) Err() error { return d.err }
