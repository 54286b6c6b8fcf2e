import { createServer } from 'node:http';
import { PaymentBook } from './payment-book.js';

/** The mock payment service on loopback: POST /charges {order}, Idempotency-Key optional. */
export interface PaymentMock {
  readonly url: string;
  readonly book: PaymentBook;
  close(): Promise<void>;
}

export async function startPaymentMock(): Promise<PaymentMock> {
  const book = new PaymentBook();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { order } = JSON.parse(body) as { order: string };
      const key = req.headers['idempotency-key'];
      const call = book.charge(order, typeof key === 'string' ? key : undefined);
      res.writeHead(call.replayed ? 200 : 201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: call.charge }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    book,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
