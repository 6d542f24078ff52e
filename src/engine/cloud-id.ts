// Elastic Cloud ids: "deployment-name:BASE64(host[:port]$elasticsearch-id$kibana-id)", what the Elastic Cloud
// console shows for a deployment. Decoded here once, so that every request near-dup makes (the client's,
// the raw ones, dashboards') goes to the same URL the official client derives from `cloud: { id }`.
import { UsageError } from '../errors.js';

/** What an Elastic Cloud id decodes to: the deployment's name and the URLs of its endpoints. */
export interface CloudEndpoints {
  /** The deployment's name (before the colon). */
  name: string;
  /** https://<elasticsearch id>.<host>[:port] */
  elasticsearch: string;
  /** https://<kibana id>.<host>[:port], when the id names one. */
  kibana?: string;
}

const SHAPE = 'an Elastic Cloud id looks like NAME:BASE64 (copy it from the deployment page of the Elastic Cloud console)';

/** The URLs a cloud id stands for; a UsageError (which never repeats the id) when it is not one. */
export function decodeCloudId(id: string): CloudEndpoints {
  const text = id.trim();
  const colon = text.lastIndexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw new UsageError(`--cloud-id is not an Elastic Cloud id: ${SHAPE}`);
  const encoded = text.slice(colon + 1);
  if (!/^[A-Za-z0-9+/=_-]+$/.test(encoded)) throw new UsageError(`--cloud-id is not an Elastic Cloud id (its part after ":" is not base64): ${SHAPE}`);
  const [host, esId, kibanaId] = Buffer.from(encoded, 'base64').toString('utf8').split('$');
  if (!host || !esId || !/^[A-Za-z0-9.-]+(:\d+)?$/.test(host) || !/^[A-Za-z0-9-]+$/.test(esId)) {
    throw new UsageError(`--cloud-id does not decode to HOST$ELASTICSEARCH_ID[$KIBANA_ID]: ${SHAPE}`);
  }
  const [hostname, port] = host.split(':');
  const at = (sub: string) => `https://${sub}.${hostname}${port && port !== '443' ? `:${port}` : ''}`;
  return { name: text.slice(0, colon), elasticsearch: at(esId), kibana: kibanaId && /^[A-Za-z0-9-]+$/.test(kibanaId) ? at(kibanaId) : undefined };
}
