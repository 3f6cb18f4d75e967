/**
 * Synthetic distractor skills for the search evaluation: realistic technical vocabulary (tools,
 * products, file formats, tasks), so that they compete with real skills on words, not on meaning.
 *
 * Two kinds, mixed:
 * - templated: a task on a product, written the way skill authors write (name, "Use when ..."
 *   description, a body of headings and steps full of the same vocabulary);
 * - recombined: sentences and body passages lifted from several different real skills and stitched
 *   together, so the words of a real skill appear in skills that do something else.
 * Deterministic for a seed.
 */
import type { CorpusSkill } from './corpus.js';

const PRODUCTS = [
  'github',
  'gitlab',
  'bitbucket',
  'jenkins',
  'circleci',
  'github actions',
  'argo cd',
  'kubernetes',
  'helm',
  'docker',
  'terraform',
  'pulumi',
  'ansible',
  'aws',
  's3',
  'lambda',
  'cloudformation',
  'gcp',
  'bigquery',
  'azure',
  'cosmos db',
  'postgres',
  'mysql',
  'sqlite',
  'redis',
  'mongodb',
  'elasticsearch',
  'kafka',
  'rabbitmq',
  'spark',
  'airflow',
  'dbt',
  'snowflake',
  'databricks',
  'pandas',
  'numpy',
  'polars',
  'scipy',
  'matplotlib',
  'plotly',
  'seaborn',
  'jupyter',
  'pytorch',
  'tensorflow',
  'scikit-learn',
  'xgboost',
  'hugging face',
  'langchain',
  'openai',
  'claude',
  'react',
  'next.js',
  'vue',
  'svelte',
  'angular',
  'tailwind',
  'typescript',
  'node.js',
  'deno',
  'python',
  'rust',
  'go',
  'java',
  'kotlin',
  'swift',
  'flutter',
  'react native',
  'electron',
  'playwright',
  'cypress',
  'selenium',
  'jest',
  'vitest',
  'pytest',
  'junit',
  'storybook',
  'figma',
  'sketch',
  'canva',
  'notion',
  'confluence',
  'jira',
  'linear',
  'asana',
  'trello',
  'slack',
  'discord',
  'microsoft teams',
  'zoom',
  'google docs',
  'google sheets',
  'excel',
  'powerpoint',
  'word',
  'pdf',
  'latex',
  'markdown',
  'csv',
  'json',
  'yaml',
  'parquet',
  'hdf5',
  'xml',
  'svg',
  'stripe',
  'shopify',
  'salesforce',
  'hubspot',
  'zendesk',
  'intercom',
  'mailchimp',
  'sendgrid',
  'datadog',
  'grafana',
  'prometheus',
  'sentry',
  'pagerduty',
  'new relic',
  'splunk',
  'opentelemetry',
  'wordpress',
  'webflow',
  'contentful',
  'sanity',
  'strapi',
  'supabase',
  'firebase',
  'vercel',
  'netlify',
  'cloudflare',
  'nginx',
  'graphql',
  'grpc',
  'openapi',
  'swagger',
  'postman',
  'oauth',
  'ffmpeg',
  'opencv',
  'blender',
  'unity',
  'unreal engine',
  'godot',
  'three.js',
  'd3',
  'mapbox',
  'leaflet',
  'qgis',
  'postgis',
  'r',
  'matlab',
  'stata',
  'spss',
  'excel pivot tables',
  'tableau',
  'power bi',
  'looker',
  'metabase',
  'anki',
  'obsidian',
  'zotero',
  'arxiv',
  'pubmed',
  'biorxiv',
  'uniprot',
  'pdb',
  'alphafold',
  'ensembl',
  'ncbi',
  'blast',
  'samtools',
  'bcftools',
  'gatk',
  'seurat',
  'anndata',
  'rdkit',
  'chembl',
  'pubchem',
  'openmm',
  'gromacs',
  'ase',
  'pymatgen',
  'qiskit',
  'cirq',
  'pennylane',
  'sympy',
  'networkx',
  'statsmodels',
  'lifelines',
  'prophet',
  'mlflow',
  'weights and biases',
  'ray',
  'dask',
  'modal',
  'runpod',
  'slurm',
  'singularity',
];

const OBJECTS = [
  'pull requests',
  'commits',
  'branches',
  'release notes',
  'changelogs',
  'pipelines',
  'workflows',
  'build logs',
  'test suites',
  'flaky tests',
  'unit tests',
  'integration tests',
  'end-to-end tests',
  'snapshots',
  'fixtures',
  'coverage reports',
  'dashboards',
  'alerts',
  'incidents',
  'postmortems',
  'runbooks',
  'on-call rotations',
  'deployments',
  'rollbacks',
  'feature flags',
  'migrations',
  'schemas',
  'queries',
  'indexes',
  'tables',
  'spreadsheets',
  'pivot tables',
  'charts',
  'plots',
  'figures',
  'slide decks',
  'presentations',
  'documents',
  'reports',
  'briefs',
  'memos',
  'emails',
  'newsletters',
  'blog posts',
  'landing pages',
  'components',
  'design tokens',
  'themes',
  'icons',
  'illustrations',
  'logos',
  'brand guidelines',
  'style guides',
  'wireframes',
  'mockups',
  'prototypes',
  'user stories',
  'requirements',
  'specs',
  'roadmaps',
  'sprint plans',
  'backlogs',
  'tickets',
  'meeting notes',
  'transcripts',
  'summaries',
  'invoices',
  'contracts',
  'receipts',
  'budgets',
  'forecasts',
  'financial models',
  'cap tables',
  'resumes',
  'cover letters',
  'job postings',
  'interview questions',
  'onboarding guides',
  'tutorials',
  'api docs',
  'readmes',
  'docstrings',
  'type definitions',
  'dependencies',
  'lockfiles',
  'containers',
  'images',
  'clusters',
  'secrets',
  'certificates',
  'permissions',
  'access policies',
  'audit logs',
  'vulnerabilities',
  'datasets',
  'experiments',
  'models',
  'embeddings',
  'prompts',
  'evaluations',
  'benchmarks',
  'notebooks',
  'sequences',
  'genomes',
  'variants',
  'alignments',
  'protein structures',
  'molecules',
  'compounds',
  'cell atlases',
  'expression matrices',
  'time series',
  'survey responses',
  'citations',
  'bibliographies',
  'manuscripts',
  'grant proposals',
  'literature reviews',
  'videos',
  'podcasts',
  'audio files',
  'subtitles',
  'thumbnails',
  'animations',
  'game levels',
  'sprites',
  'shaders',
  'maps',
  'geospatial layers',
  'sensor data',
  'logs',
  'traces',
  'metrics',
  'events',
  'webhooks',
];

const VERBS = [
  'generate',
  'create',
  'write',
  'draft',
  'review',
  'audit',
  'analyze',
  'summarize',
  'convert',
  'migrate',
  'refactor',
  'debug',
  'fix',
  'test',
  'validate',
  'lint',
  'format',
  'optimize',
  'profile',
  'monitor',
  'deploy',
  'schedule',
  'automate',
  'sync',
  'export',
  'import',
  'parse',
  'extract',
  'merge',
  'split',
  'visualize',
  'plot',
  'chart',
  'design',
  'prototype',
  'document',
  'translate',
  'classify',
  'cluster',
  'label',
  'annotate',
  'clean',
  'deduplicate',
  'search',
  'index',
  'query',
  'track',
  'plan',
  'estimate',
  'prioritize',
  'triage',
  'benchmark',
  'simulate',
  'fit',
  'train',
  'evaluate',
  'tune',
  'scrape',
  'crawl',
  'publish',
  'render',
  'compress',
  'encrypt',
  'back up',
];

const QUALIFIERS = [
  'quickly',
  'safely',
  'step by step',
  'at scale',
  'for a team',
  'for production',
  'in CI',
  'locally',
  'with best practices',
  'following house style',
  'with citations',
  'incrementally',
  'without breaking changes',
  'for beginners',
  'for stakeholders',
  'on a schedule',
  'in bulk',
  'from the command line',
  'inside the editor',
  'across repositories',
  'for compliance',
];

const HEADINGS = [
  'Overview',
  'When to use',
  'When not to use',
  'Quick start',
  'Workflow',
  'Steps',
  'Examples',
  'Configuration',
  'Inputs',
  'Outputs',
  'Troubleshooting',
  'Common mistakes',
  'Best practices',
  'Reference',
  'Checklist',
  'Requirements',
  'Setup',
  'Usage',
  'Tips',
  'Limitations',
  'FAQ',
  'Output format',
  'Validation',
  'Scripts',
  'Related skills',
];

const OPENERS = [
  'Use when you need to',
  'Use this skill to',
  'Helps you',
  'Use when the user asks to',
  'A toolkit to',
  'Guides Claude to',
  'Workflow to',
  'Expert guidance to',
  'Utilities to',
  'Use when working with',
  'Comprehensive support to',
  'Automates how you',
];

const CONNECTIVES = [
  'Then',
  'Next',
  'First',
  'Finally',
  'If needed',
  'Before you start',
  'Afterwards',
  'Always',
  'Never',
  'When possible',
  'For large inputs',
  'By default',
  'Optionally',
];

type Random = () => number;

function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function sentence(random: Random): string {
  const verb = pick(random, VERBS);
  const object = pick(random, OBJECTS);
  const product = pick(random, PRODUCTS);
  const shapes = [
    () => `${verb} ${object} in ${product}`,
    () => `${verb} ${object} with ${product} and ${pick(random, PRODUCTS)}`,
    () => `${verb} ${product} ${object} ${pick(random, QUALIFIERS)}`,
    () => `${verb} and ${pick(random, VERBS)} ${object} from ${product}`,
    () => `${verb} ${object} for ${pick(random, OBJECTS)} using ${product}`,
  ];
  return pick(random, shapes)();
}

export interface Distractor {
  name: string;
  description: string;
  body: string;
}

function templated(random: Random, index: number): Distractor {
  const product = pick(random, PRODUCTS);
  const verb = pick(random, VERBS);
  const object = pick(random, OBJECTS);
  const name = `${slug(`${product} ${verb} ${object}`).slice(0, 50)}-${index.toString(36)}`;
  const extra = Math.floor(random() * 3);
  const parts = [`${pick(random, OPENERS)} ${verb} ${object} in ${product}.`];
  for (let at = 0; at < extra; at++) parts.push(`${capitalise(sentence(random))}.`);
  const description = parts.join(' ');
  const sections = 2 + Math.floor(random() * 5);
  const body: string[] = [`# ${capitalise(`${product} ${object}`)}`, ''];
  for (let s = 0; s < sections; s++) {
    body.push(`## ${pick(random, HEADINGS)}`, '');
    const steps = 2 + Math.floor(random() * 6);
    for (let at = 0; at < steps; at++) {
      const lead = random() < 0.4 ? `${pick(random, CONNECTIVES)}, ` : '';
      body.push(`${at + 1}. ${capitalise(lead + sentence(random))}.`);
    }
    if (random() < 0.3) body.push('', '```bash', `${slug(product)} ${slug(verb)} --${slug(object)}`, '```');
    body.push('');
  }
  return { name, description: description.slice(0, 1024), body: body.join('\n') };
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?。])\s+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 20);
}

function recombined(random: Random, index: number, real: readonly CorpusSkill[]): Distractor {
  const sources = [pick(random, real), pick(random, real), pick(random, real)];
  const words = sources.flatMap((source) => source.name.split('-'));
  const name = `${slug(`${pick(random, words)} ${pick(random, words)} ${pick(random, OBJECTS)}`).slice(0, 50)}-${index.toString(36)}`;
  const description = sources
    .slice(0, 2)
    .map((source) => pick(random, sentencesOf(source.description).concat(source.description.slice(0, 120))))
    .join(' ')
    .slice(0, 1024);
  const body: string[] = [];
  for (const source of sources) {
    const lines = source.body.split('\n');
    const start = Math.floor(random() * Math.max(1, lines.length - 20));
    body.push(...lines.slice(start, start + 5 + Math.floor(random() * 20)), '');
  }
  return { name, description, body: body.join('\n') };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `count` distractors, about a third of them recombined from `real`. Names end in a unique suffix. */
export function distractors(
  count: number,
  real: readonly CorpusSkill[],
  { seed = 2640, recombinedShare = 0.3 }: { seed?: number; recombinedShare?: number } = {},
): Distractor[] {
  const random = mulberry32(seed);
  const made: Distractor[] = [];
  for (let index = 0; index < count; index++) {
    made.push(
      real.length > 0 && random() < recombinedShare
        ? recombined(random, index, real)
        : templated(random, index),
    );
  }
  return made;
}
