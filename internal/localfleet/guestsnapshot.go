package localfleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// A guest's data is its keys in the fleet's etcd, under the prefix
// "/<name>/" its kube-apiserver was started with (--etcd-prefix). An etcd
// snapshot of a hosted control plane (HyperShift's documented backup:
// `etcdctl snapshot save` with the writers stopped) is, for a guest that
// shares the fleet's etcd, exactly those keys: SnapshotGuest reads them,
// RestoreGuest writes them under another guest's prefix before its
// kube-apiserver first starts, as HyperShift's etcd restores a snapshot
// into an empty data directory before etcd serves. Both talk to etcd
// through its v3 JSON gateway (/v3/kv/range, /v3/kv/put), so the fleet
// needs no etcd client library.

// GuestSnapshot is the data of one guest control plane: its etcd keys
// (without the guest's prefix) and values.
type GuestSnapshot struct {
	Keys []GuestKey `json:"keys"`
}

// GuestKey is one etcd key of a guest, relative to its prefix.
type GuestKey struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// snapshotPageSize bounds one range request: a guest's CRDs alone are
// megabytes, more than etcd's gateway answers at once.
const snapshotPageSize = 100

// SnapshotGuest stops the guest control plane name, if it runs (the etcd
// writers stop before a snapshot, so it is consistent), and returns its
// data. Its keys stay in etcd: StartGuest with the same name serves them
// again.
func (f *Fleet) SnapshotGuest(ctx context.Context, name string) (*GuestSnapshot, error) {
	f.StopGuest(name)
	prefix := guestPrefix(name)
	snap := &GuestSnapshot{}
	from := []byte(prefix)
	for {
		kvs, more, err := f.etcdRange(ctx, from, prefixEnd(prefix), snapshotPageSize)
		if err != nil {
			return nil, fmt.Errorf("snapshot of guest %s: %w", name, err)
		}
		for _, kv := range kvs {
			snap.Keys = append(snap.Keys, GuestKey{Key: kv.Key[len(prefix):], Value: kv.Value})
		}
		if !more || len(kvs) == 0 {
			return snap, nil
		}
		from = append(append([]byte(nil), kvs[len(kvs)-1].Key...), 0)
	}
}

// RestoreGuest writes snap as the data of the guest control plane name,
// which must not run. As HyperShift restores a snapshot only into an empty
// etcd, it writes nothing when the guest has data already, and says so.
func (f *Fleet) RestoreGuest(ctx context.Context, name string, snap *GuestSnapshot) (restored bool, err error) {
	if _, running := f.Guest(name); running {
		return false, nil
	}
	prefix := guestPrefix(name)
	existing, _, err := f.etcdRange(ctx, []byte(prefix), prefixEnd(prefix), 1)
	if err != nil {
		return false, fmt.Errorf("restore of guest %s: %w", name, err)
	}
	if len(existing) > 0 {
		return false, nil
	}
	for _, kv := range snap.Keys {
		if err := f.etcdPut(ctx, append([]byte(prefix), kv.Key...), kv.Value); err != nil {
			return false, fmt.Errorf("restore of guest %s: %w", name, err)
		}
	}
	return true, nil
}

// guestPrefix is the etcd prefix of a guest's keys (startCluster's
// --etcd-prefix, with the separator).
func guestPrefix(name string) string { return "/" + name + "/" }

// prefixEnd is the range end covering every key that starts with prefix.
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	end[len(end)-1]++ // prefix ends in '/', never 0xff
	return end
}

type etcdKV struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// etcdRange reads up to limit keys in [from, end), sorted by key.
func (f *Fleet) etcdRange(ctx context.Context, from, end []byte, limit int) ([]etcdKV, bool, error) {
	var resp struct {
		Kvs  []etcdKV `json:"kvs"`
		More bool     `json:"more"`
	}
	err := f.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": from, "range_end": end, "limit": limit}, &resp)
	return resp.Kvs, resp.More, err
}

func (f *Fleet) etcdPut(ctx context.Context, key, value []byte) error {
	return f.etcdCall(ctx, "/v3/kv/put", map[string]any{"key": key, "value": value}, nil)
}

// etcdCall posts body (byte slices encode as base64, as the gateway wants)
// to the gateway's path and decodes the answer into out.
func (f *Fleet) etcdCall(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(f.etcd.clientURL, "/")+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(answer))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
