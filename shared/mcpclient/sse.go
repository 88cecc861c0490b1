package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawTransport wraps a legacy SSE transport so that forwarded requests can be answered
// from the connection's read loop (rawConn) while go-sdk owns the session.
type rawTransport struct {
	mcp.Transport
	conn *rawConn
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &rawConn{Connection: c, pending: map[int64]chan *jsonrpc.Response{}}
	return t.conn, nil
}

// rawConn is a go-sdk connection whose Read takes out the responses to forwarded
// requests (ids ≥ forwardIDBase) and delivers them to their callers.
type rawConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[int64]chan *jsonrpc.Response
	err     error // set once Read failed: the connection is over
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
			}
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return nil, err
		}
		if r, ok := msg.(*jsonrpc.Response); ok {
			if n, isInt := r.ID.Raw().(int64); isInt && n >= forwardIDBase {
				c.mu.Lock()
				ch := c.pending[n]
				delete(c.pending, n)
				c.mu.Unlock()
				if ch != nil {
					ch <- r
				}
				continue
			}
		}
		return msg, nil
	}
}

// call writes one request and waits for its response.
func (c *rawConn) call(ctx context.Context, id int64, method string, params json.RawMessage) (json.RawMessage, error) {
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, c.err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	jid := forwardJID(id)
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: params}); err != nil {
		forget()
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, mcp.ErrConnectionClosed
		}
		return resultOf(r)
	case <-ctx.Done():
		forget()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		cp, _ := json.Marshal(map[string]any{"requestId": id, "reason": "cancelled by the gateway's client"})
		_ = c.Connection.Write(cctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: cp})
		return nil, ctx.Err()
	}
}
