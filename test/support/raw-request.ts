// One HTTP request with its path exactly as given (a URL string would be normalized: `..` taken as a step
// back, escapes re-encoded) and its body as given; the answer's status and its JSON (the text when it is not
// JSON). What the proxy tests send to see the proxy read a request as the engines do.
import http from 'node:http';

export interface RawAnswer {
  status: number;
  json: any;
}

export function rawRequest(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const req = http.request({ hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = text;
        try {
          json = JSON.parse(text);
        } catch {
          // kept as text
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
