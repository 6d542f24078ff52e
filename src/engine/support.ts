// Engine support as data: which flavours and majors near-dup works with and everything that differs between
// them (the official client package and how it is configured, point in time, the Dashboards saved-object
// format, the development engine of that major). The table is support.json, so that the engine script
// (scripts/engine) and the test harness (test/setup) read the same entries without a build; this module
// gives it types, says what each field means, and looks entries up. A new major is one entry there.
import table from './support.json' with { type: 'json' };
import type { Flavour } from './detect.js';

/** The official client packages near-dup speaks through (package.json installs each under this name). */
export type ClientPackage = '@opensearch-project/opensearch' | '@elastic/elasticsearch' | '@elastic/elasticsearch8' | '@elastic/elasticsearch7';

/** The saved-object files near-dup can make (dashboards/saved-object-formats.ts makes each). */
export type SavedObjectFormat = 'opensearch-dashboards' | 'kibana';

/** What differs between the official client packages. */
export interface ClientSupport {
  /** The name of the client's TLS option: `ssl` (OpenSearch, Elasticsearch 7) or `tls` (Elasticsearch 8 and later). */
  tlsOption: 'ssl' | 'tls';
  /** A request asks for `meta: true` to get the status and headers with the body (Elasticsearch 8 and later). */
  meta: boolean;
  /** The client takes a cloud id and a CA fingerprint itself; for the others connection.ts resolves both first. */
  cloudAndFingerprint: boolean;
}

/** One flavour as users know it. */
export interface FlavourSupport {
  /** Its name in messages. */
  name: string;
  /** The oldest version near-dup works with, as messages say it ("1.x", "7.10"). */
  oldest: string;
  /** Its Dashboards product, as the product names itself in its answers' headers. */
  dashboards: 'OpenSearch Dashboards' | 'Kibana';
  /** Its Docker image, without the tag (the tag is the version scripts/engine pins for the major). */
  image: string;
}

/** From a version ("8.9") on, a saved-object format; a major's list is in version order. */
export interface FormatFrom {
  from: string;
  format: SavedObjectFormat;
}

/** One major of one flavour. */
export interface MajorSupport {
  flavour: Flavour;
  major: number;
  /** The client package that serves it (the Elasticsearch client's major must match the server's). */
  client: ClientPackage;
  /** The first version of the major with a point in time ("2.4"), or null when the major has none (then scroll). */
  pointInTimeFrom: string | null;
  /** Which saved-object file its Dashboards product (of the same version) imports as current. */
  savedObjects: FormatFrom[];
  /** The engine scripts/engine starts for this major: its name, its port on 127.0.0.1, the Java it needs. */
  engine: { name: string; port: number; java: number };
}

/** src/engine/support.json as read: what each engine major supports and which client package serves it. */
export interface SupportTable {
  flavours: Record<Flavour, FlavourSupport>;
  clients: Record<ClientPackage, ClientSupport>;
  /** By flavour, then major, oldest first. */
  majors: MajorSupport[];
}

/** The table (support.json); test/unit/engine-support.test.ts holds it to what is installed and started. */
export const SUPPORT: SupportTable = table as SupportTable;

/** The majors of one flavour, oldest first. */
export function majorsOf(flavour: Flavour): MajorSupport[] {
  return SUPPORT.majors.filter((m) => m.flavour === flavour);
}

/**
 * The entry that serves a major: its own, or the newest one for a major newer than any in the table (a new
 * major is taken to behave as the last one known); undefined for a major older than every entry.
 */
export function majorSupport(flavour: Flavour, major: number): MajorSupport | undefined {
  const majors = majorsOf(flavour);
  const newest = majors[majors.length - 1];
  return majors.find((m) => m.major === major) ?? (newest && major > newest.major ? newest : undefined);
}

/** What differs for a client package. */
export function clientSupport(pkg: ClientPackage): ClientSupport {
  return SUPPORT.clients[pkg];
}

/** Whether major.minor is at or after a version written "M.m". */
export function atLeast(version: { major: number; minor: number }, from: string): boolean {
  const [major = 0, minor = 0] = from.split('.').map(Number);
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** "OpenSearch 1.x to 3.x and Elasticsearch 7.10 to 9.x": the supported range, for messages. */
export function supportedRange(): string {
  const ranges = (Object.keys(SUPPORT.flavours) as Flavour[]).map((flavour) => {
    const majors = majorsOf(flavour);
    return `${SUPPORT.flavours[flavour].name} ${SUPPORT.flavours[flavour].oldest} to ${majors[majors.length - 1]?.major}.x`;
  });
  return ranges.join(' and ');
}
