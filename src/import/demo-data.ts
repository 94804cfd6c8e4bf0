import type { CompanyDto, ContactDto } from '../companies/dto/company.dto';
import type { CrmStatus, IntentLevel, LeadStatus, Seniority } from '../generated/prisma/enums';
import type { LeadDto } from '../leads/dto/lead.dto';
import type { ImportFile } from './import-file';

/*
 * The demo data set of `seed --demo`: a few hundred plausible companies, their contacts and
 * leads, in the import format. A seeded PRNG makes every run produce the same companies, so that
 * re-running the seed updates them in place; only the dates move with the clock.
 */
export const DEMO_COMPANY_COUNT = 300;
export const DEMO_LEAD_COUNT = 120;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const WINDOW_DAYS = 90;

interface Country {
  name: string;
  tld: string;
  cities: string[];
  people: 'fr' | 'en' | 'de' | 'es' | 'nl';
  phone: (random: Random) => string;
  weight: number;
}

const COUNTRIES: Country[] = [
  {
    name: 'France',
    tld: 'fr',
    cities: ['Paris', 'Lyon', 'Lille', 'Nantes', 'Bordeaux', 'Toulouse', 'Marseille', 'Rennes'],
    people: 'fr',
    phone: (r) => `+33 ${r.pick(['1', '6', '7'])} ${pairs(r, 4)}`,
    weight: 45,
  },
  {
    name: 'Germany',
    tld: 'de',
    cities: ['Berlin', 'Munich', 'Hamburg', 'Cologne', 'Frankfurt'],
    people: 'de',
    phone: (r) => `+49 ${r.int(30, 89)} ${r.digits(7)}`,
    weight: 12,
  },
  {
    name: 'United Kingdom',
    tld: 'co.uk',
    cities: ['London', 'Manchester', 'Bristol', 'Edinburgh', 'Leeds'],
    people: 'en',
    phone: (r) => `+44 20 ${r.digits(4)} ${r.digits(4)}`,
    weight: 12,
  },
  {
    name: 'Spain',
    tld: 'es',
    cities: ['Madrid', 'Barcelona', 'Valencia', 'Seville'],
    people: 'es',
    phone: (r) => `+34 ${r.digits(3)} ${r.digits(3)} ${r.digits(3)}`,
    weight: 7,
  },
  {
    name: 'Belgium',
    tld: 'be',
    cities: ['Brussels', 'Antwerp', 'Ghent', 'Liège'],
    people: 'fr',
    phone: (r) => `+32 2 ${r.digits(3)} ${pairs(r, 2)}`,
    weight: 6,
  },
  {
    name: 'Netherlands',
    tld: 'nl',
    cities: ['Amsterdam', 'Rotterdam', 'Utrecht', 'Eindhoven'],
    people: 'nl',
    phone: (r) => `+31 20 ${r.digits(3)} ${r.digits(4)}`,
    weight: 6,
  },
  {
    name: 'Switzerland',
    tld: 'ch',
    cities: ['Geneva', 'Zurich', 'Lausanne'],
    people: 'fr',
    phone: (r) => `+41 22 ${r.digits(3)} ${pairs(r, 2)}`,
    weight: 4,
  },
  {
    name: 'United States',
    tld: 'com',
    cities: ['New York', 'Boston', 'San Francisco', 'Austin', 'Chicago'],
    people: 'en',
    phone: (r) => `+1 ${r.int(201, 989)} ${r.digits(3)} ${r.digits(4)}`,
    weight: 8,
  },
];

const INDUSTRIES: { name: string; suffixes: string[] }[] = [
  { name: 'Software', suffixes: ['Software', 'Labs', 'Cloud', 'Systems'] },
  { name: 'Data & Analytics', suffixes: ['Analytics', 'Data', 'Insights'] },
  { name: 'IT Services', suffixes: ['Consulting', 'IT', 'Digital'] },
  { name: 'Logistics', suffixes: ['Logistics', 'Freight', 'Transport'] },
  { name: 'Manufacturing', suffixes: ['Industries', 'Manufacturing', 'Components'] },
  { name: 'Financial Services', suffixes: ['Capital', 'Finance', 'Partners'] },
  { name: 'Insurance', suffixes: ['Assurances', 'Insurance', 'Mutual'] },
  { name: 'Healthcare', suffixes: ['Health', 'Medical', 'Care'] },
  { name: 'Retail', suffixes: ['Retail', 'Stores', 'Market'] },
  { name: 'E-commerce', suffixes: ['Shop', 'Commerce', 'Direct'] },
  { name: 'Energy', suffixes: ['Energy', 'Power', 'Renewables'] },
  { name: 'Construction', suffixes: ['Construction', 'Building', 'Habitat'] },
  { name: 'Marketing & Advertising', suffixes: ['Media', 'Agency', 'Studio'] },
  { name: 'Education', suffixes: ['Learning', 'Academy', 'Education'] },
  { name: 'Food & Beverage', suffixes: ['Foods', 'Kitchen', 'Brewing'] },
  { name: 'Real Estate', suffixes: ['Properties', 'Estates', 'Immobilier'] },
];

const NAME_STEMS = list(`
  Alder, Altavia, Amberley, Arcadia, Atlas, Aubrac, Beacon, Beaumont, Belvedere, Brightwave,
  Cairn, Cascade, Clairval, Cobalt, Corvus, Delmar, Driftwood, Ember, Estuaire, Everline, Fjord,
  Foxglove, Garonne, Granite, Halcyon, Harbor, Helios, Horizon, Iris, Juniper, Kestrel, Keystone,
  Lattice, Lumen, Lumière, Maple, Meridian, Mistral, Montclar, Nimbus, Nordlys, Northwind,
  Oakridge, Opal, Orchard, Pioneer, Prism, Quartz, Redwood, Riverstone, Sable, Saint-Aubin,
  Silverline, Solaris, Tessera, Tidewater, Upland, Vantage, Verdon, Vertex, Willow, Wren, Zephyr
`);

const SIZE_BANDS = [
  { size: '1-10', revenue: ['<1M'], weight: 8 },
  { size: '11-50', revenue: ['<1M', '1M-10M'], weight: 22 },
  { size: '51-200', revenue: ['1M-10M', '10M-50M'], weight: 28 },
  { size: '201-500', revenue: ['10M-50M', '50M-100M'], weight: 18 },
  { size: '501-1000', revenue: ['50M-100M', '100M-500M'], weight: 11 },
  { size: '1001-5000', revenue: ['100M-500M', '500M-1B'], weight: 8 },
  { size: '5001-10000', revenue: ['500M-1B', '1B+'], weight: 3 },
  { size: '10001+', revenue: ['1B+'], weight: 2 },
];

const FIRST_NAMES: Record<Country['people'], string[]> = {
  fr: list(`Camille, Julien, Claire, Thomas, Léa, Nicolas, Sophie, Antoine, Manon, Mathieu, Élodie,
    Hugo, Pauline, Romain, Inès, Guillaume, Chloé, Maxime`),
  en: list(`Emma, James, Olivia, Daniel, Charlotte, Michael, Sarah, David, Grace, Oliver, Hannah,
    Ryan, Amelia, Jack, Lucy, Ethan`),
  de: list(`Anna, Lukas, Katharina, Jonas, Laura, Felix, Julia, Maximilian, Lena, Tobias, Sabine,
    Stefan`),
  es: list(`Lucía, Javier, Marta, Pablo, Elena, Carlos, Sofía, Alejandro, Carmen, Diego`),
  nl: list(`Sanne, Daan, Lotte, Bram, Fleur, Joost, Eva, Thijs, Anouk, Ruben`),
};

const LAST_NAMES: Record<Country['people'], string[]> = {
  fr: list(`Martin, Bernard, Dubois, Lefèvre, Moreau, Laurent, Girard, Rousseau, Fontaine,
    Chevalier, Garnier, Faure, Mercier, Blanc, Guérin, Perrin`),
  en: list(`Smith, Johnson, Taylor, Brown, Walker, Wright, Hughes, Clarke, Turner, Bennett, Morgan,
    Foster, Reed, Parker`),
  de: list(`Müller, Schmidt, Schneider, Fischer, Weber, Becker, Hoffmann, Wagner, Koch, Richter`),
  es: list(`García, Fernández, López, Martínez, Sánchez, Romero, Navarro, Torres, Ruiz, Moreno`),
  nl: list(`de Vries, Jansen, Bakker, Visser, Smit, Meijer, de Boer, Mulder, Bos, Vos`),
};

const TITLES: Record<Seniority, string[]> = {
  c_level: list(`CEO, CTO, CFO, COO, Chief Marketing Officer, Chief Revenue Officer`),
  vp: list(`VP Sales, VP Marketing, VP Engineering, VP Operations, VP Customer Success`),
  director: list(`Sales Director, Marketing Director, Head of Growth, IT Director,
    Director of Operations, Head of Procurement`),
  manager: list(`Account Manager, Marketing Manager, Operations Manager, Product Manager,
    Sales Manager, Demand Generation Manager`),
  ic: list(`Business Developer, Data Analyst, Software Engineer, Sales Representative,
    Marketing Specialist, Buyer`),
};

const SENIORITIES: { value: Seniority; weight: number }[] = [
  { value: 'c_level', weight: 15 },
  { value: 'vp', weight: 15 },
  { value: 'director', weight: 25 },
  { value: 'manager', weight: 25 },
  { value: 'ic', weight: 20 },
];

const CRM_STATUSES: { value: CrmStatus; weight: number }[] = [
  { value: 'new', weight: 40 },
  { value: 'qualified', weight: 15 },
  { value: 'in_crm', weight: 15 },
  { value: 'contacted', weight: 15 },
  { value: 'won', weight: 7 },
  { value: 'lost', weight: 8 },
];

const LEAD_STATUSES: { value: LeadStatus; weight: number }[] = [
  { value: 'new', weight: 45 },
  { value: 'contacted', weight: 25 },
  { value: 'qualified', weight: 15 },
  { value: 'converted', weight: 5 },
  { value: 'dismissed', weight: 10 },
];

const SALES_REPS = ['usr_camille_roux', 'usr_julien_marchand', 'usr_sarah_cohen', 'usr_tom_weber'];

const SIGNALS: ((c: CompanyDto, r: Random) => string)[] = [
  (_c, r) => `Visited the pricing page ${r.int(3, 9)} times in the last ${r.int(3, 10)} days`,
  (c, r) =>
    `${r.int(2, 6)} visitors from ${c.name} read the ${c.industry.toLowerCase()} case studies`,
  (_c, r) => `Came back to the integrations page after ${r.int(7, 30)} days of silence`,
  () => 'Compared the Growth and Enterprise plans, then opened the security documentation',
  () => 'Downloaded the ROI white paper and viewed the customer stories',
  (_c, r) => `Spent ${r.int(4, 15)} minutes on the demo request page without submitting it`,
  (c, r) => `${r.int(2, 5)} people from ${c.city} browsed the API documentation this week`,
  (_c, r) => `Watched ${r.int(60, 100)}% of the product webinar replay`,
];

const ACTIONS: ((contact: string, c: CompanyDto) => string)[] = [
  (contact) => `Call ${contact} within 24 hours to discuss pricing`,
  (contact, c) => `Send ${contact} the ${c.industry.toLowerCase()} case study`,
  (contact) => `Invite ${contact} to the next product webinar`,
  (contact) => `Connect with ${contact} on LinkedIn and share the integration guide`,
  (_contact, c) => `Add ${c.name} to the ${c.industry} outbound sequence`,
  (contact) => `Offer ${contact} a 30-minute demo this week`,
  (contact) => `Email ${contact} the security and GDPR documentation`,
];

/** The demo data set, its dates within the 90 days before `now`. Same companies on every run. */
export function buildDemoData(now: number): Required<ImportFile> {
  const random = new Random(0x5eed_2026);
  // Dates on a whole hour: a second run within the hour writes exactly the same rows.
  const end = Math.floor(now / HOUR_MS) * HOUR_MS;
  const companies = buildCompanies(random, end);
  return { companies, leads: buildLeads(random, companies) };
}

/**
 * The companies that the lookups' examples find (docs/api.md, "Lookups: domain and q";
 * docs/using-the-api.md): `domain=acme.com,initech.io`, and `q=acme` (Acme Analytics is hot).
 * demo-data.spec.ts runs those examples on the demo data.
 */
export const LOOKUP_EXAMPLES = [
  { name: 'Acme Analytics', domain: 'acme.com' },
  { name: 'Initech Software', domain: 'initech.io' },
];

function buildCompanies(random: Random, end: number): CompanyDto[] {
  const companies: CompanyDto[] = [];
  const names = new Set<string>();
  while (companies.length < DEMO_COMPANY_COUNT) {
    const industry = random.pick(INDUSTRIES);
    const stem = random.pick(NAME_STEMS);
    const country = random.weighted(COUNTRIES.map((c) => ({ value: c, weight: c.weight })));
    const drawn =
      country.people === 'fr' && random.chance(0.3)
        ? `${random.pick(['Groupe', 'Maison', 'Atelier'])} ${stem}`
        : `${stem} ${random.pick(industry.suffixes)}`;
    if (names.has(drawn)) continue;
    names.add(drawn);
    // The first companies are the docs' lookup examples; the draws above are made all the same,
    // so that every other company is what it would be without them.
    const example = LOOKUP_EXAMPLES[companies.length];
    const name = example?.name ?? drawn;

    const number = String(companies.length + 1).padStart(4, '0');
    const band = random.weighted(SIZE_BANDS.map((b) => ({ value: b, weight: b.weight })));
    // Mostly lukewarm, a long tail of hot accounts; whole numbers, so scores tie now and then.
    const intentScore = Math.round(100 * random.next() ** 1.6);
    const icpScore = random.int(15, 98);
    const visitsCount = Math.max(1, Math.round(intentScore / 3 + random.int(0, 12)));
    // Hot accounts were seen recently; first visit between the window's start and the last one.
    const lastSeen =
      end - Math.floor(WINDOW_DAYS * DAY_MS * random.next() * (1 - intentScore / 130));
    const windowStart = end - WINDOW_DAYS * DAY_MS;
    const firstSeen = lastSeen - Math.floor((lastSeen - windowStart) * random.next());
    const domain = example?.domain ?? `${slug(name)}.${country.tld}`;
    const company: CompanyDto = {
      id: `co_demo_${number}`,
      name,
      domain,
      industry: industry.name,
      size: band.size,
      country: country.name,
      city: random.pick(country.cities),
      revenue: random.pick(band.revenue),
      // French companies found in the registry (most of them) carry their SIREN.
      siren: country.name === 'France' && random.chance(0.85) ? siren(random) : null,
      intentScore,
      intentLevel: intentLevelOf(intentScore),
      icpScore,
      commercialScore: Math.round(0.6 * intentScore + 0.4 * icpScore),
      crmStatus: random.weighted(CRM_STATUSES),
      visitsCount,
      firstSeen: toSecond(firstSeen),
      lastSeen: toSecond(lastSeen),
      contacts: [],
    };
    company.contacts = buildContacts(random, company, country);
    companies.push(company);
  }
  return companies;
}

function buildContacts(random: Random, company: CompanyDto, country: Country): ContactDto[] {
  const count = random.weighted(
    [0, 1, 2, 3, 4].map((n, i) => ({ value: n, weight: [8, 20, 30, 26, 16][i] })),
  );
  const contacts: ContactDto[] = [];
  const names = new Set<string>();
  for (let n = 1; contacts.length < count; n++) {
    const first = random.pick(FIRST_NAMES[country.people]);
    const last = random.pick(LAST_NAMES[country.people]);
    const name = `${first} ${last}`;
    if (names.has(name)) continue;
    names.add(name);
    const seniority = random.weighted(SENIORITIES);
    contacts.push({
      id: `ct_demo_${company.id.slice('co_demo_'.length)}_${n}`,
      name,
      jobTitle: random.pick(TITLES[seniority]),
      email: random.chance(0.75) ? `${slug(first)}.${slug(last)}@${company.domain}` : null,
      phone: random.chance(0.35) ? country.phone(random) : null,
      linkedin: random.chance(0.7)
        ? `https://www.linkedin.com/in/${slug(first)}-${slug(last)}-${random.digits(4)}`
        : null,
      seniority,
    });
  }
  return contacts;
}

/** Leads on the warmer companies that have contacts, one each. */
function buildLeads(random: Random, companies: CompanyDto[]): LeadDto[] {
  const candidates = companies
    .filter((company) => company.contacts.length > 0)
    .sort((a, b) => b.intentScore - a.intentScore || compareIds(a.id, b.id))
    .slice(0, Math.round(DEMO_LEAD_COUNT * 1.5));
  const chosen = random.shuffle(candidates).slice(0, DEMO_LEAD_COUNT);
  chosen.sort((a, b) => compareIds(a.id, b.id));
  return chosen.map((company, index) => {
    const contact = random.pick(company.contacts);
    const intentScore = Math.max(0, Math.min(100, company.intentScore + random.int(-5, 5)));
    const status = random.weighted(LEAD_STATUSES);
    const firstSeen = Date.parse(company.firstSeen);
    const createdAt =
      firstSeen + Math.floor((Date.parse(company.lastSeen) - firstSeen) * random.next());
    return {
      id: `ld_demo_${String(index + 1).padStart(4, '0')}`,
      companyId: company.id,
      companyName: company.name,
      contactName: contact.name,
      contactTitle: contact.jobTitle,
      intentScore,
      intentLevel: intentLevelOf(intentScore),
      signal: random.pick(SIGNALS)(company, random),
      recommendedAction: random.pick(ACTIONS)(contact.name.split(' ')[0], company),
      status,
      createdAt: toSecond(createdAt),
      contactEmail: contact.email,
      assignedToId: status === 'new' && random.chance(0.6) ? null : random.pick(SALES_REPS),
    };
  });
}

export function intentLevelOf(score: number): IntentLevel {
  if (score >= 70) return 'hot';
  if (score >= 40) return 'warm';
  return 'cold';
}

/** A 9-digit SIREN whose last digit is the Luhn check digit of the first eight. */
export function siren(random: Random): string {
  const payload = random.digits(8);
  for (let check = 0; check <= 9; check++) {
    if (isLuhnValid(payload + check)) return payload + String(check);
  }
  throw new Error('unreachable: one of ten check digits always satisfies Luhn');
}

export function isLuhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Word lists written as text: `list('a, b,\n c')` is ['a', 'b', 'c']. */
function list(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function slug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toSecond(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

function pairs(random: Random, count: number): string {
  return Array.from({ length: count }, () => random.digits(2)).join(' ');
}

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** In [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  weighted<T>(items: readonly { value: T; weight: number }[]): T {
    const total = items.reduce((sum, item) => sum + item.weight, 0);
    let target = this.next() * total;
    for (const item of items) {
      target -= item.weight;
      if (target < 0) return item.value;
    }
    return items[items.length - 1].value;
  }

  digits(count: number): string {
    let text = '';
    for (let i = 0; i < count; i++) text += String(this.int(0, 9));
    return text;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const result = [...items];
    for (let i = result.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [result[i], result[j]] = [result[j], result[i]];
    }
    return result;
  }
}
