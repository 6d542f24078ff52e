// What the secured suite's globalSetup (setup.ts) hands to its tests (vitest provide/inject).

export interface SecuredUser {
  username: string;
  password: string;
  roles: string[];
}

export interface SecuredEngine {
  /** https://..., without credentials. */
  url: string;
  version: string;
  /** An explicit OPENSEARCH_SECURED_URL, or scripts/engine's opensearch-secured. */
  source: 'url' | 'embedded';
  /** The CA that signed the engine's certificate (the demo configuration's root-ca.pem): --ca-file. */
  caFile: string;
  /**
   * By name, as scripts/engine/secured-users.json defines them (nd_admin: all_access, nd_user: near_dup,
   * nd_reader: near_dup_reader), and admin.
   */
  users: Record<string, SecuredUser>;
  /** The indices the test roles grant: test indices must match it. */
  indexPattern: string;
  /**
   * A client certificate (PEM file paths) the engine authenticates as user `username`, mapped to the near_dup
   * role (scripts/engine's opensearch-secured only: mutual TLS, clientauth_mode OPTIONAL).
   */
  certUser?: { username: string; cert: string; key: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The secured engine, or null (then securedMissing says why). */
    secured: SecuredEngine | null;
    securedMissing: string;
  }
}
