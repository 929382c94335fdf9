import { contractChecker } from './contract';

/**
 * A small HTTP client over fetch, speaking to the app as a seller's backend would. Every call
 * is checked against the committed openapi.json (./contract.ts): a call the document does not
 * describe throws, so each e2e test also tests the document.
 */
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, not JSON-encoded. */
  rawBody?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
}

export class HttpClient {
  constructor(readonly baseUrl: string) {}

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body });
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text.length > 0) parsed = JSON.parse(text);
    const problems = contractChecker().check({
      method,
      url: path,
      requestHeaders: headers,
      requestBody: body,
      status: response.status,
      responseHeaders: response.headers,
      responseText: text,
    });
    if (problems.length > 0) {
      throw new Error(
        `The call does not match openapi.json (fix the server or the document):\n- ${problems.join('\n- ')}`,
      );
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
}
