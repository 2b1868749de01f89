// Unit tests of the components and the pure view functions (jsdom; the
// console's hooks are mocked per test, the components are real).
module.exports = {
  testEnvironment: 'jsdom',
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.test.ts?(x)'],
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { jsx: 'react', esModuleInterop: true, resolveJsonModule: true } }],
  },
  moduleNameMapper: { '\\.css$': '<rootDir>/src/__tests__/style-stub.js' },
  setupFiles: ['<rootDir>/src/__tests__/setup.ts'],
  setupFilesAfterEnv: ['@testing-library/jest-dom'],
};
