import { describe, expect, it } from 'vitest';
import type { ZapkPackage } from '../renderer/src/api';
import { translate } from '../renderer/src/i18n';
import { namesOf } from '../renderer/src/names/names';

/**
 * Ids as the console names them (renderer/src/names): apps by name, classes by the rule's name or
 * the model's label, rule ids ("person:0", "crowd:counter", "walk:speed:0", "shelf:removed", what
 * the engine fires) by app and what they watch; an id nobody names stays as it is.
 */

const COCO = ['person', 'bicycle', 'car'];
const PACKAGES: ZapkPackage[] = [
  {
    zapk_id: 'builtin',
    name: 'Built-in',
    apps: {
      person: {
        app_id: 'person',
        name: 'People',
        license_expire: 0,
        perpetual: true,
        rule: {},
        labels: COCO,
      },
      crowd: {
        app_id: 'crowd',
        name: 'Crowd',
        license_expire: 0,
        perpetual: true,
        rule: { classes: [{ class_id: '2', name: 'vehicle' }] },
        labels: COCO,
      },
    },
  },
  {
    zapk_id: 'shop',
    name: 'Shop',
    apps: [
      { app_id: 'shelf:a', name: 'Shelf A', license_expire: 0, perpetual: true, rule: {}, labels: ['box'] },
    ],
  },
];

const en = namesOf(PACKAGES, (key, params) => translate('en', key, params));
const zh = namesOf(PACKAGES, (key, params) => translate('zh-CN', key, params));

describe('namesOf', () => {
  it('names apps, and leaves an unknown app id as it is', () => {
    expect(['person', 'crowd', 'shelf:a', 'gone'].map(en.app)).toEqual([
      'People',
      'Crowd',
      'Shelf A',
      'gone',
    ]);
  });

  it("names a class by the rule's name, else the model's label", () => {
    expect(en.class('0', 'person')).toBe('person');
    expect(en.class('2', 'crowd')).toBe('vehicle');
    expect(en.class('2', 'person')).toBe('car');
    expect(en.class('0', 'shelf:a')).toBe('box');
    expect(en.class('7', 'person')).toBe('7');
    expect(en.class('x', 'person')).toBe('x');
    // In some apps (those with alarms), or without: every app's name for it, each once.
    expect(en.class('0', ['person', 'gone'])).toBe('person');
    expect(en.class('2', ['person', 'crowd'])).toBe('car / vehicle');
    expect(en.class('0', [])).toBe('0');
    expect(en.class('0')).toBe('person / box');
  });

  it('names the rules the engine fires, in the language', () => {
    const ids = ['person:0', 'crowd:2', 'crowd:counter', 'person:speed:0', 'shelf:a:removed', 'shelf:a:0'];
    expect(ids.map(en.rule)).toEqual([
      'People: person',
      'Crowd: vehicle',
      'Crowd: counter',
      'People: speed of person',
      'Shelf A: removed objects',
      'Shelf A: box',
    ]);
    expect(ids.map(zh.rule)).toEqual([
      'People：person',
      'Crowd：vehicle',
      'Crowd：计数器',
      'People：person的速度',
      'Shelf A：物品移除',
      'Shelf A：box',
    ]);
    expect(['gone:0', 'plain'].map(en.rule)).toEqual(['gone:0', 'plain']);
  });

  it("translates the built-in package's names while they are the shipped ones", () => {
    const builtin = (motion: string): ZapkPackage[] => [
      {
        zapk_id: 'builtin',
        name: 'Built-in analysis',
        builtin: true,
        apps: { motion: { app_id: 'motion', name: motion, license_expire: 0, perpetual: true, rule: {} } },
      },
    ];
    const zhOf = (packages: ZapkPackage[]) =>
      namesOf(packages, (key, params) => translate('zh-CN', key, params));
    expect([
      zhOf(builtin('Motion detection')).package('builtin'),
      zhOf(builtin('Motion detection')).app('motion'),
    ]).toEqual(['内置分析', '移动侦测']);
    expect(namesOf(builtin('Motion detection'), (key) => translate('en', key)).app('motion')).toBe(
      'Motion detection',
    );
    // The operator's own name stays theirs; a package that is not the built-in one is not translated.
    expect(zhOf(builtin('Gate motion')).app('motion')).toBe('Gate motion');
    expect(zh.app('person')).toBe('People');
  });
});
